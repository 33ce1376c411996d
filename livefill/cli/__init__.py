"""livefill's command-line front ends (no Qt): `livefill extract` (extract*.py) and `livefill-server` (server.py)."""
