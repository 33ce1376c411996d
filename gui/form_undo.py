"""Edit ▸ Clear form / Clear all lanes, Undo and Redo: one undo stack for every change the user
makes to the forms as a whole.

How this works
--------------
`FormUndo` holds the window's one `QUndoStack` and the Edit actions on it. A clear is a `ClearCommand`
on it (the session empties the forms and hands back what each held; the command keeps that and
the session forgets it), and "Open into form" is an `OpenRunCommand` (`livefill.gui.open_run`), so
undo and redo walk one history, latest step first. A step is undone or redone only if the forms
still show exactly what the step left; otherwise nothing is changed, the step is dropped and one
line says so: a later run or edit is never thrown away by an old step.

Ctrl+Z / Ctrl+Shift+Z in a text field that has nothing of its own to undo or redo (e.g. the
field a clear just emptied) go to the window's Undo / Redo (`_FieldKeys`), not to the field.
"""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QPlainTextEdit, QTextEdit, QWidget

from livefill.extraction.form import FormModel, FormSnapshot
from livefill.gui.errors import reporting
from livefill.session.session import Session
from livefill.session.session_events import ActiveChanged, SessionEvent, ViewChanged

__all__ = ["ClearCommand", "FormUndo"]


class ClearCommand(QUndoCommand):
    """Clear the forms shown, as one undoable step (pushed once the session has cleared them)."""

    def __init__(self, session: Session, say: Callable[[str], None], text: str,
                 cleared: tuple[tuple[FormModel, FormSnapshot], ...]) -> None:
        super().__init__(text)
        self.session = session
        self.say = say
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
        shown = [lane.form for lane in self.session.lanes if lane.has_form]
        return all(any(form is f for f in shown) and form.snapshot() == snap
                   for (form, _), snap in zip(self.cleared, expected, strict=True))

    def _changed_since(self) -> None:
        self.setObsolete(True)  # the stack drops it; the forms stay as they are
        self.say(f"The form has changed since \u201c{self.text()}\u201d: it stays as it is (nothing was undone)")


class FormUndo(QObject):
    """The window's undo stack and its Edit actions: `clear_action`, `undo_action`, `redo_action`.

    `say` puts one line in the status bar and the run log; `commit_edits` sends every edit still in
    progress to its form (a value being typed is part of what Undo puts back)."""

    def __init__(self, window: QWidget, session: Session, *, say: Callable[[str], None],
                 commit_edits: Callable[[], None]) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.say = say
        self.commit_edits = commit_edits
        self.stack = QUndoStack(window)

        self.clear_action = QAction("Clear form", window)
        self.clear_action.setObjectName("clearAction")
        self.clear_action.setShortcut(QKeySequence("Ctrl+Shift+Backspace"))
        self.clear_action.triggered.connect(reporting(lambda _checked=False: self.clear_forms()))
        self.undo_action = QAction("Undo", window)
        self.undo_action.setObjectName("undoAction")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(reporting(lambda _checked=False: self._step(False)))
        self.redo_action = QAction("Redo", window)
        self.redo_action.setObjectName("redoAction")
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.redo_action.triggered.connect(reporting(lambda _checked=False: self._step(True)))
        self._keys = _FieldKeys(window)

        for signal in (self.stack.indexChanged, self.stack.canUndoChanged, self.stack.canRedoChanged,
                       self.stack.undoTextChanged):
            signal.connect(self._sync_undo)
        window.destroyed.connect(session.subscribe(self._on_session_event))
        self._sync_clear()
        self._sync_undo()

    def add_to(self, edit: QMenu) -> None:
        """Clear, then Undo and Redo, at the end of the Edit menu."""
        edit.addAction(self.clear_action)
        edit.addSeparator()
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)

    def clear_forms(self) -> bool:
        """Clear form (single view) or Clear all lanes (compare), undoably; False if refused."""
        session = self.session
        if session.active:
            self.say("Stop the run before clearing the form.")
            return False
        self.commit_edits()  # a value still being typed is part of what Undo puts back
        text = "clear all lanes" if session.comparing else "clear form"
        session.clear_forms()
        cleared = session.last_cleared
        session.forget_clear()  # the window's undo stack keeps it from here
        self.stack.push(ClearCommand(session, self.say, text, cleared))
        return True

    def _step(self, forward: bool) -> None:
        if self.session.active:
            self.say("Stop the run before undoing or redoing a change to the form.")
        elif forward:
            self.stack.redo()
        else:
            self.stack.undo()

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, (ActiveChanged, ViewChanged)):
            self._sync_clear()
        if isinstance(event, ActiveChanged):
            self._sync_undo()

    def _sync_clear(self) -> None:
        """Edit ▸ Clear form (Clear all lanes in compare), following the session."""
        if not shiboken6.isValid(self.clear_action):  # the window is gone; the session outlives it
            return
        comparing = self.session.comparing
        self.clear_action.setText("Clear all lanes" if comparing else "Clear form")
        self.clear_action.setToolTip(
            "Empty every lane's form (Edit ▸ Undo puts the values back)" if comparing
            else "Empty the form, your own values included (Edit ▸ Undo puts them back)"
        )
        self.clear_action.setEnabled(not self.session.active)

    def _sync_undo(self, *_args: object) -> None:
        """Undo / Redo say their step, and are refused while a run is active."""
        stack = self.stack
        if not shiboken6.isValid(stack):  # the window is gone; the session outlives it
            return
        idle = not self.session.active
        self.undo_action.setText(f"Undo {stack.undoText()}".strip())
        self.undo_action.setEnabled(idle and stack.canUndo())
        self.redo_action.setText(f"Redo {stack.redoText()}".strip())
        self.redo_action.setEnabled(idle and stack.canRedo())
        self._keys.follow_focus(stack.canUndo() or stack.canRedo())  # only while there is a step to take


class _FieldKeys(QObject):
    """Undo / Redo keys in a text field with nothing of its own to undo / redo go to the window.

    Qt asks the focused widget whether it wants a shortcut's key (ShortcutOverride), so the filter
    sits on the focused text field alone and moves with the focus: on the application it would run
    in Python for every event of every object (some 1,500 a second while a run streams)."""

    def __init__(self, window: QWidget) -> None:
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
