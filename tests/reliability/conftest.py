"""Reliability tests: the GUI fixtures (a qasync loop, a window on the demo server). The fault
matrix's table is printed at the end of the session and written to the run's temporary folder by
tests/conftest.py (under xdist only the controller sees every worker's cells)."""

from __future__ import annotations

from tests.gui.conftest import make_window, qloop  # noqa: F401 (GUI fixtures for the window tests)
