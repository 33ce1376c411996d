"""Edit ▸ Clear form / Clear all lanes, Undo and Redo: one undo stack for every change the user
makes to the forms as a whole.

How this works
--------------
The window has one `QUndoStack` (`livefill.gui.history_panel.undo_stack_of`). A clear is a `ClearCommand`
on it (the session empties the forms and hands back what each held; the command keeps that and
the session forgets it), and "Open into form" is an `OpenRunCommand` (gui/history_panel.py), so
undo and redo walk one history, latest step first. A step is undone or redone only if the forms
still show exactly what the step left; otherwise nothing is changed, the step is dropped and one
line says so: a later run or edit is never thrown away by an old step.

Ctrl+Z / Ctrl+Shift+Z in a text field that has nothing of its own to undo or redo (e.g. the
field a clear just emptied) go to the window's Undo / Redo (`_FieldKeys`), not to the field.
"""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QUndoCommand
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit

from livefill.extraction.form import FormModel, FormSnapshot
from livefill.gui.errors import reporting

__all__ = ["ClearCommand", "add_clear", "add_undo", "clear_forms"]


class ClearCommand(QUndoCommand):
    """Clear the forms shown, as one undoable step (pushed once the session has cleared them)."""

    def __init__(self, window: Any, text: str, cleared: tuple[tuple[FormModel, FormSnapshot], ...]) -> None:
        super().__init__(text)
        self.window = window
        self.cleared = cleared
        self.emptied = tuple(form.snapshot() for form, _ in cleared)
        self._pushed = True  # the clear happened before the push: the first redo() is the push's

    def redo(self) -> None:
        if self._pushed:
            self._pushed = False
            return
        if self._unchanged(tuple(before for _, before in self.cleared)):
            for form, _ in self.cleared:
                form.clear()
        else:
            self._changed_since()

    def undo(self) -> None:
        if self._unchanged(self.emptied):
            for form, before in self.cleared:
                form.put_back(before)
        else:
            self._changed_since()

    def _unchanged(self, expected: tuple[FormSnapshot, ...]) -> bool:
        shown = [lane.form for lane in self.window.session.lanes if lane.has_form]
        return all(any(form is f for f in shown) and form.snapshot() == snap
                   for (form, _), snap in zip(self.cleared, expected, strict=True))

    def _changed_since(self) -> None:
        self.setObsolete(True)  # the stack drops it; the forms stay as they are
        self.window.say(f"The form has changed since \u201c{self.text()}\u201d: it stays as it is (nothing was undone)")


def clear_forms(window: Any) -> bool:
    """Clear form (single view) or Clear all lanes (compare), undoably; False if refused."""
    from livefill.gui.history_panel import undo_stack_of

    session = window.session
    if session.active:
        window.say("Stop the run before clearing the form.")
        return False
    window.commit_pending_edits()  # a value still being typed is part of what Undo puts back
    text = "clear all lanes" if session.comparing else "clear form"
    session.clear_forms()
    cleared = session.last_cleared
    session.forget_clear()  # the window's undo stack keeps it from here
    undo_stack_of(window).push(ClearCommand(window, text, cleared))
    return True


def add_clear(window: Any, menu: Any) -> None:
    """Edit ▸ Clear form (Clear all lanes in compare), following the session."""
    from livefill.session.session import ActiveChanged, ViewChanged

    session = window.session
    window.clear_action = QAction("Clear form", window)
    window.clear_action.setObjectName("clearAction")
    window.clear_action.setShortcut(QKeySequence("Ctrl+Shift+Backspace"))
    window.clear_action.triggered.connect(reporting(lambda _checked=False: clear_forms(window)))
    menu.addAction(window.clear_action)

    def sync(event: Any = None) -> None:
        if event is not None and not isinstance(event, (ActiveChanged, ViewChanged)):
            return
        if not shiboken6.isValid(window.clear_action):  # the window is gone; the session outlives it
            return
        comparing = session.comparing
        window.clear_action.setText("Clear all lanes" if comparing else "Clear form")
        window.clear_action.setToolTip(
            "Empty every lane's form (Edit ▸ Undo puts the values back)" if comparing
            else "Empty the form, your own values included (Edit ▸ Undo puts them back)"
        )
        window.clear_action.setEnabled(not session.active)

    window.destroyed.connect(session.subscribe(sync))
    sync()


def add_undo(window: Any, edit: Any) -> None:
    """Edit ▸ Undo / Redo on the window's undo stack (refused, with a line, while a run is active)."""
    from livefill.session.session import ActiveChanged
    from livefill.gui.history_panel import undo_stack_of

    stack = undo_stack_of(window)
    session = window.session

    def step(forward: bool) -> None:
        if window.active:
            window.say("Stop the run before undoing or redoing a change to the form.")
        elif forward:
            stack.redo()
        else:
            stack.undo()

    window.undo_action = QAction("Undo", window)
    window.undo_action.setObjectName("undoAction")
    window.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
    window.undo_action.triggered.connect(reporting(lambda _checked=False: step(False)))
    window.undo_clear_action = window.undo_action  # the one Undo: a clear is undone by it too
    window.redo_action = QAction("Redo", window)
    window.redo_action.setObjectName("redoAction")
    window.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
    window.redo_action.triggered.connect(reporting(lambda _checked=False: step(True)))
    keys = _FieldKeys(window)

    def sync(*_args: Any) -> None:
        if not shiboken6.isValid(stack):  # the window is gone; the session outlives it
            return
        idle = not session.active
        window.undo_action.setText(f"Undo {stack.undoText()}".strip())
        window.undo_action.setEnabled(idle and stack.canUndo())
        window.redo_action.setText(f"Redo {stack.redoText()}".strip())
        window.redo_action.setEnabled(idle and stack.canRedo())
        keys.follow_focus(stack.canUndo() or stack.canRedo())  # only while there is a step to take

    stack.indexChanged.connect(sync)
    stack.canUndoChanged.connect(sync)
    stack.canRedoChanged.connect(sync)
    stack.undoTextChanged.connect(sync)
    window.destroyed.connect(session.subscribe(lambda event: sync() if isinstance(event, ActiveChanged) else None))
    sync()
    edit.addSeparator()
    edit.addAction(window.undo_action)
    edit.addAction(window.redo_action)


class _FieldKeys(QObject):
    """Undo / Redo keys in a text field with nothing of its own to undo / redo go to the window.

    Qt asks the focused widget whether it wants a shortcut's key (ShortcutOverride), so the filter
    sits on the focused text field alone and moves with the focus: on the application it would run
    in Python for every event of every object (some 1,500 a second while a run streams)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self._window = window
        self._following = False
        self._field: QObject | None = None  # the focused text field the filter sits on

    def follow_focus(self, on: bool) -> None:
        app = QApplication.instance()
        if on == self._following or app is None:
            return
        self._following = on
        if on:
            app.focusChanged.connect(self._focus_moved)  # type: ignore[attr-defined]
            self._focus_moved(None, app.focusWidget())  # type: ignore[attr-defined]
        else:
            app.focusChanged.disconnect(self._focus_moved)  # type: ignore[attr-defined]
            self._focus_moved(None, None)

    def _focus_moved(self, _old: QObject | None, new: QObject | None) -> None:
        if self._field is not None and shiboken6.isValid(self._field):
            self._field.removeEventFilter(self)
        self._field = new if isinstance(new, (QLineEdit, QPlainTextEdit, QTextEdit)) else None
        if self._field is not None:
            self._field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(watched, (QLineEdit, QPlainTextEdit, QTextEdit)):
            return False
        if not isinstance(event, QKeyEvent) or not self._window.isAncestorOf(watched):
            return False
        document = None if isinstance(watched, QLineEdit) else watched.document()
        if event.matches(QKeySequence.StandardKey.Undo):
            own = watched.isUndoAvailable() if document is None else document.isUndoAvailable()
        elif event.matches(QKeySequence.StandardKey.Redo):
            own = watched.isRedoAvailable() if document is None else document.isRedoAvailable()
        else:
            return False
        return not own  # True: the field does not see the key, so the window's Undo / Redo runs
