"""The GUI fixtures (a qasync loop, a window on the demo server) for the reliability tests."""

from tests.gui.conftest import make_window, qloop  # noqa: F401 (fixtures)
