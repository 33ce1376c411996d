"""livefill's bundled files (package data): scenarios, their recordings, and the QSS styles."""
