"""Exceptions from slots and tasks reach the user as a message, never vanish into a hook.

`show_error(message, parent)` opens a non-modal message box (object name `errorBox`) over the
window; `reporting` wraps a slot so that an exception it raises is shown so (over the window of
the object whose slot it was) and printed to stderr; `install(window, loop)` routes uncaught
exceptions (sys.excepthook, the asyncio loop's handler) to `show_error` too. Every message and
every traceback goes through the redactor set by `set_redactor` (the key store's `redact`), so
no known API key reaches a message box or the crash output.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMessageBox, QWidget

F = TypeVar("F", bound=Callable[..., Any])

_parent: QWidget | None = None
_redact: Callable[[str], str] = str


def set_redactor(redact: Callable[[str], str] | None) -> None:
    """Run every shown message and printed traceback through `redact` (None: as they are)."""
    global _redact
    _redact = redact or str


def _print_exception(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
    sys.stderr.write(_redact("".join(traceback.format_exception(kind, exc, tb))))


def show_error(message: str, parent: QWidget | None = None) -> QMessageBox:
    """Show `message` in a non-modal message box (never a nested event loop); the box."""
    box = QMessageBox(parent or _parent)
    box.setObjectName("errorBox")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("livefill")
    box.setText(_redact(message))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def _window_of(obj: Any) -> QWidget | None:
    """The window an object's slot belongs to (a widget's window, or a QObject's first widget parent)."""
    while isinstance(obj, QObject):
        if isinstance(obj, QWidget):
            return obj.window()
        obj = obj.parent()
    return None


def reporting(slot: F) -> F:
    """Decorate a slot: an exception it raises is shown to the user (and logged to stderr)."""

    @functools.wraps(slot)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return slot(*args, **kwargs)
        except Exception as exc:
            _print_exception(type(exc), exc, exc.__traceback__)
            show_error(f"{type(exc).__name__}: {exc}", _window_of(args[0]) if args else None)
            return None

    return wrapper  # type: ignore[return-value]


def install(parent: QWidget, loop: Any | None = None) -> None:
    """Route uncaught exceptions (sys.excepthook, the asyncio loop's handler) to `show_error`."""
    global _parent
    _parent = parent

    def excepthook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        _print_exception(kind, exc, tb)
        show_error(f"{kind.__name__}: {exc}")

    sys.excepthook = excepthook
    if loop is not None:

        def handler(_loop: Any, context: dict[str, Any]) -> None:
            exc = context.get("exception")
            message = context.get("message", "error")
            if exc is not None:
                _print_exception(type(exc), exc, exc.__traceback__)
                show_error(f"{type(exc).__name__}: {exc}")
            else:
                print(_redact(str(message)), file=sys.stderr)
                show_error(str(message))

        loop.set_exception_handler(handler)
