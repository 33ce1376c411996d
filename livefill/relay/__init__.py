"""The relay: livefill relay v1 (docs/relay-v1.md) — records, settler, client and server."""
