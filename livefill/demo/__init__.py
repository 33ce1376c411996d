"""The demo provider: the real Anthropic, OpenAI and Ollama wires, answered from scenarios."""
