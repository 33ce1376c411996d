"""Exceptions from slots and tasks reach the user as a message, never vanish into a hook.

`show_error(message, parent)` opens a non-modal message box (object name `errorBox`) over the
window; `reporting` wraps a slot so that an exception it raises is shown so and printed to stderr.
The app makes one `ErrorReporter(window, redact)`, a child of its window: it routes uncaught
exceptions (sys.excepthook, the asyncio loop's handler) there too, and every message and
traceback goes through its `redact` (the key store's), so no known API key reaches a message box
or the crash output.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

__all__ = ["ErrorReporter", "reporter_for", "reporting", "show_error"]

F = TypeVar("F", bound=Callable[..., Any])

# How this works: the reporter is found through Qt's object tree, not a module global. A slot's
# object (or a message's parent) leads to its window, and the window's ErrorReporter child holds
# the redactor; a slot with no object of its own (a lambda) uses the application's window that has
# a reporter. No reporter anywhere (a test's bare widget): the message is shown as it is.
#
# PySide6 decides how many of a signal's arguments to pass from the slot's code object: a wrapper
# taking `*args` gets none, so `triggered(bool)` would call `slot(self)` without `checked`. The
# wrapper `reporting` makes is therefore compiled with the slot's own parameters (names and
# defaults), so Qt passes what it passed to the slot itself, and code calling it by keyword still
# can.


class ErrorReporter(QObject):
    """The app's error reporting over `window` (its child): messages and tracebacks redacted by `redact`."""

    def __init__(self, window: QWidget, redact: Callable[[str], str] | None = None) -> None:
        super().__init__(window)
        self.setObjectName("errorReporter")
        self.window = window
        self.redact: Callable[[str], str] = redact or str

    def show(self, message: str, parent: QWidget | None = None) -> QMessageBox:
        """`message`, redacted, in a non-modal box over `parent` (default: the window)."""
        return _message_box(self.redact(message), parent or self.window)

    def print_exception(self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """The traceback on stderr, redacted."""
        sys.stderr.write(self.redact("".join(traceback.format_exception(kind, exc, tb))))

    def report(self, exc: BaseException, parent: QWidget | None = None) -> QMessageBox:
        """Print `exc`'s traceback and show it in a box."""
        self.print_exception(type(exc), exc, exc.__traceback__)
        return self.show(f"{type(exc).__name__}: {exc}", parent)

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Route uncaught exceptions (sys.excepthook, `loop`'s exception handler) to this reporter."""

        def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
            self.print_exception(kind, exc, tb)
            self.show(f"{kind.__name__}: {exc}")

        sys.excepthook = excepthook
        if loop is not None:

            def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
                exc = context.get("exception")
                if exc is not None:
                    self.report(exc)
                else:
                    message = str(context.get("message", "error"))
                    print(self.redact(message), file=sys.stderr)
                    self.show(message)

            loop.set_exception_handler(handler)


def reporter_for(obj: object | None) -> ErrorReporter | None:
    """The reporter of `obj`'s window; else of the application's window that has one; else None."""
    window = _window_of(obj)
    if window is not None:
        found = window.findChild(ErrorReporter, "errorReporter", Qt.FindChildOption.FindDirectChildrenOnly)
        if found is not None:
            return found
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return None
    for widget in app.topLevelWidgets():
        found = widget.findChild(ErrorReporter, "errorReporter", Qt.FindChildOption.FindDirectChildrenOnly)
        if found is not None:
            return found
    return None


def show_error(message: str, parent: QWidget | None = None) -> QMessageBox:
    """Show `message` in a non-modal message box (never a nested event loop); the box."""
    reporter = reporter_for(parent)
    if reporter is not None:
        return reporter.show(message, parent)
    return _message_box(message, parent)


def _message_box(text: str, parent: QWidget | None) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName("errorBox")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("livefill")
    box.setText(text)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def _window_of(obj: object | None) -> QWidget | None:
    """The window an object belongs to (a widget's window, or a QObject's first widget parent)."""
    while isinstance(obj, QObject):
        if isinstance(obj, QWidget):
            return obj.window()
        obj = obj.parent()
    return None


def _report(owner: object | None, exc: Exception) -> None:
    reporter = reporter_for(owner)
    if reporter is not None:
        reporter.report(exc, _window_of(owner))
        return
    sys.stderr.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    _message_box(f"{type(exc).__name__}: {exc}", _window_of(owner))


def reporting(slot: F) -> F:
    """Decorate a slot: an exception it raises is shown to the user (and logged to stderr). The
    wrapper has the slot's parameters, so Qt passes it the same arguments (see the comment above)."""
    bound_to = getattr(slot, "__self__", None)  # reporting(self._method): the method's object

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return slot(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - shown to the user, not swallowed
            owner = bound_to if bound_to is not None else (args[0] if args else None)
            _report(owner, exc)
            return None

    return _with_parameters_of(slot, call)  # type: ignore[return-value]


def _with_parameters_of(slot: Callable[..., Any], call: Callable[..., Any]) -> Callable[..., Any]:
    """A function with `slot`'s positional parameters (names, defaults) that hands them to `call`."""
    try:
        parameters = list(inspect.signature(slot).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: as many arguments as given
        parameters = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if all(p.kind in plain for p in parameters):
        names = [f"p{i}_{p.name}" if not p.name.isidentifier() else p.name for i, p in enumerate(parameters)]
        source = f"def slot({', '.join(names)}):\n    return __call({', '.join(names)})\n"
        defaults = tuple(p.default for p in parameters if p.default is not inspect.Parameter.empty)
    else:  # *args, keyword-only: Qt passes such a slot nothing; so does the wrapper's *args
        source = "def slot(*args, **kwargs):\n    return __call(*args, **kwargs)\n"
        defaults = ()
    namespace: dict[str, Any] = {"__call": call}
    exec(source, namespace)  # noqa: S102 - compiles a fixed template over the slot's parameter names
    wrapper = namespace["slot"]
    wrapper.__defaults__ = defaults or None
    functools.update_wrapper(wrapper, slot)
    return wrapper
