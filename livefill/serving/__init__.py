"""Serving: the loopback HTTP plumbing every local server shares (guard, connection, runner)."""
