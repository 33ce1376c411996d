"""Exceptions from slots and tasks reach the user as a message, never vanish into a hook."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

F = TypeVar("F", bound=Callable[..., Any])

_parent: QWidget | None = None
shown: list[str] = []  # every message shown (tests and scripts read it)


def show_error(message: str, parent: QWidget | None = None) -> None:
    """Show `message` in a non-modal message box (never a nested event loop) and remember it."""
    shown.append(message)
    box = QMessageBox(parent or _parent)
    box.setObjectName("errorBox")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("livefill")
    box.setText(message)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()


def reporting(slot: F) -> F:
    """Decorate a slot: an exception it raises is shown to the user (and logged to stderr)."""

    @functools.wraps(slot)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return slot(*args, **kwargs)
        except Exception as exc:
            traceback.print_exc()
            show_error(f"{type(exc).__name__}: {exc}")
            return None

    return wrapper  # type: ignore[return-value]


def install(parent: QWidget, loop: Any | None = None) -> None:
    """Route uncaught exceptions (sys.excepthook, the asyncio loop's handler) to `show_error`."""
    global _parent
    _parent = parent

    def excepthook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        traceback.print_exception(kind, exc, tb)
        show_error(f"{kind.__name__}: {exc}")

    sys.excepthook = excepthook
    if loop is not None:

        def handler(_loop: Any, context: dict[str, Any]) -> None:
            exc = context.get("exception")
            message = context.get("message", "error")
            if exc is not None:
                traceback.print_exception(type(exc), exc, exc.__traceback__)
                show_error(f"{type(exc).__name__}: {exc}")
            else:
                print(message, file=sys.stderr)
                show_error(str(message))

        loop.set_exception_handler(handler)
