"""The QApplication the window and `livefill animate` both run in, made the same way for both.

`make_application()` sets the GIL's switch interval, quiets Qt's benign warnings and returns the
application (named "livefill", left running when its last window closes: the coroutine decides
when to stop).

Importing this module also makes PySide6's import hook cheaper (`lighten_import_hook`): PySide6
replaces `__import__` (for its `__feature__` switches) and, the first time each module is named in
an import after PySide6 is loaded, reads that module's whole source through `inspect.getsource`
(tokenized, its lines kept in `linecache` for the life of the process) only to see whether it
contains "PySide6". The window's launch names ~150 modules so before its first show (~40 ms of the
GUI thread), the warm-up ~3,400 (0.3-0.8 s of its 2.5-3.5 s). The hook now reads the file's bytes
instead: the same answer, for a fraction of the cost, and nothing kept. (launch.py imports this
module first, before qasync and the window's modules.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

__all__ = ["BENIGN_QT_MESSAGES", "SWITCH_INTERVAL", "install_qt_message_filter", "lighten_import_hook", "make_application"]

SWITCH_INTERVAL = 0.001
"""sys.setswitchinterval for the app: the demo server's thread shares the GIL with the GUI thread;
at the default 5 ms a busy server thread delays the GUI by up to 5 ms per hand-over."""

BENIGN_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)
"""Qt warnings the offscreen platform prints for every window; nothing is wrong."""


def install_qt_message_filter() -> None:
    """Print Qt's messages to stderr, except the benign ones."""

    def handler(_kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
        if message not in BENIGN_QT_MESSAGES:
            print(message, file=sys.stderr)

    qInstallMessageHandler(handler)


def make_application() -> QApplication:
    """The process's QApplication (made if there is none yet), set up as the app needs it."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    install_qt_message_filter()
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0]])
    app.setApplicationName("livefill")
    app.setQuitOnLastWindowClosed(False)  # the coroutine decides when to stop
    return app


def _reading_bytes(original: Callable[[ModuleType], bool]) -> Callable[[ModuleType], bool]:
    """PySide6's "does this module's source say PySide6?", answered from the file's bytes; any
    module that is not a plain .py file (or cannot be read) still gets `original`'s answer."""

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as file:
                    source = file.read()
            except OSError:
                pass
            else:  # (Python source is in an ASCII-compatible encoding: the same answer as in its text)
                return b"PySide6" in source
        return original(module)

    uses_pyside.original = original  # type: ignore[attr-defined]
    return uses_pyside


def lighten_import_hook() -> bool:
    """Make PySide6's per-module source check cheap (module docstring); True if it was found (a
    PySide6 without it, or one whose support module looks otherwise, is left as it is)."""
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(check) or not isinstance(getattr(feature, "pyside_feature_dict", None), dict):
        return False
    if getattr(check, "original", None) is None:
        feature._mod_uses_pyside = _reading_bytes(check)  # type: ignore[attr-defined]  # noqa: SLF001
    return True


lighten_import_hook()
