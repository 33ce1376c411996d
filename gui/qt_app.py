"""The QApplication the window and `livefill animate` both run in, made the same way for both.

`make_application()` sets the GIL's switch interval, quiets Qt's benign warnings and returns the
application (named "livefill", left running when its last window closes: the coroutine decides
when to stop).
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

__all__ = ["BENIGN_QT_MESSAGES", "SWITCH_INTERVAL", "install_qt_message_filter", "make_application"]

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
