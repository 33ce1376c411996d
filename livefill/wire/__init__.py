"""The wire: bytes from a provider cut into frames, decoded into unified stream events.

Framers (`sse`, `ndjson`), the events they end in (`events`), the taps that watch them, the
idle watchdog, API keys, and `providers` (one table of provider facts and one vocabulary each).
"""
