"""livefill's command-line front ends (no Qt): `livefill extract`."""
