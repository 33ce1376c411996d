"""Recording: what a run leaves behind — the wire recorder, traces, the history, animations."""
