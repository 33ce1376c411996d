"""Open a past run into the form (History ▸ Open into form), as one step of the window's undo stack.

`RunOpener.open(entry)` brings the run's document and schema back
(`livefill.recording.history_entries.reopen_plan`: a bundled scenario, a recorded trace, or a
document file found again by its path; the single view is shown) and loads the run's values into
that document's form, exactly, every value settled. `OpenRunCommand` is the undoable step: Undo
puts the form back exactly as it was (`FormModel.snapshot` / `put_back`), marks included, and the
document shown before -- unless the form changed since (an edit, a run): then nothing is undone,
the step is dropped and a line says so, so Undo never throws away later work. What cannot be
opened (a pasted text, a moved file) is one line said; nothing changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QUndoCommand, QUndoStack

from livefill.extraction.documents import DocumentError, load_document
from livefill.extraction.form import FormModel, FormSnapshot
from livefill.recording.history import HistoryEntry
from livefill.recording.history_entries import recording_id, reopen_plan, summarize, text_sha256
from livefill.recording.trace import TraceError, load_trace
from livefill.session.replay import trace_settings
from livefill.session.session import Session

__all__ = ["OpenRunCommand", "RunOpener"]

_DOCUMENT_SETTINGS = ("scenario", "document", "document_name", "document_path", "schema_name")


class OpenRunCommand(QUndoCommand):
    """Open a past run into the form, as one undoable step."""

    def __init__(self, session: Session, text: str, before_settings: dict[str, Any], after_settings: dict[str, Any],
                 form: FormModel, before: FormSnapshot, after: FormSnapshot,
                 say: Callable[[str], None] | None = None) -> None:
        super().__init__(text)
        self.session = session
        self.say = say
        self.before_settings, self.after_settings = before_settings, after_settings
        self.form, self.before, self.after = form, before, after
        self._done = True  # the step was taken before it was pushed

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        if self.form.snapshot() != self.before:
            self._changed_since()
            return
        self.session.replace(**self.after_settings)
        self.form.put_back(self.after)

    def undo(self) -> None:
        if self.form.snapshot() != self.after:  # edited (or run) since: undoing would lose that
            self._changed_since()
            return
        self.form.put_back(self.before)
        self.session.replace(**self.before_settings)
        if self.say is not None:  # (the line that said "Edit → Undo puts the form back" is done with)
            self.say(f"Undone: {self.text().lower()}; the form shows what it showed before")

    def _changed_since(self) -> None:
        self.setObsolete(True)  # the stack drops it; the form stays as it is
        if self.say is not None:
            self.say(f"The form has changed since \u201c{self.text()}\u201d: it stays as it is (nothing was undone)")


class RunOpener:
    """Opens past runs into `session`'s form, each one step on `stack` (see the module docstring).

    `say` puts one line in the status bar and the run log; `commit_edits` sends every edit still in
    progress to its form first (a value being typed is part of what Undo puts back)."""

    def __init__(self, session: Session, stack: QUndoStack, *, say: Callable[[str], None],
                 commit_edits: Callable[[], None], cancel_start: Callable[[], bool] = lambda: False) -> None:
        self.session = session
        self.stack = stack
        self.say = say
        self.commit_edits = commit_edits
        self.cancel_start = cancel_start  # drops a Start still waiting for the warm-up; True if there was one

    async def open(self, entry: HistoryEntry | None) -> bool:
        """Open `entry` (None: no longer in the history) into the form; True if it was."""
        session, say = self.session, self.say
        if entry is None:
            say("That run is no longer in the history.")
            return False
        if session.active:
            say("Stop the run before opening a past run into the form.")
            return False
        plan = reopen_plan(entry.record)
        if plan.problem is not None:
            say(f"Cannot open this run into the form: {plan.problem}. Its values are shown in the History panel.")
            return False
        settings = dict(plan.settings)
        note = ""
        if plan.trace_path is not None:
            try:
                trace = await asyncio.to_thread(load_trace, plan.trace_path, replayable=False)
            except TraceError as exc:
                say(f"Cannot open this run into the form: {exc}")
                return False
            if plan.trace_id is not None and recording_id(trace) != plan.trace_id:
                say(f"Cannot open this run into the form: its recording {plan.trace_path} now holds another run."
                    " Its values are shown in the History panel.")
                return False
            settings.update(trace_settings(trace))
            note = _changed_note(trace.name, settings["document"], plan.document_sha256)
        if plan.document_path is not None:
            try:
                doc = await asyncio.to_thread(load_document, plan.document_path)
            except DocumentError as exc:
                say(f"Cannot open this run into the form: {exc.message}")
                return False
            note = _changed_note(doc.name, doc.text, plan.document_sha256)
            settings.update(document=doc.text, document_name=doc.name, document_path=str(doc.path.resolve())
                            if doc.path is not None else plan.document_path)
        if session.active:  # a Start while the file was read
            say("Stop the run before opening a past run into the form.")
            return False
        self.commit_edits()  # a value still being typed is part of what Undo puts back
        if self.cancel_start():  # a Start still waiting for the demo provider would overwrite the opened run
            say("The Start waiting for the demo provider was cancelled: a past run was opened instead.")
        if session.replay is not None:
            session.leave_replay()
        if session.comparing:
            session.leave_compare()  # the window shows the single form (and unchecks Compare)
        old = session.settings
        before_settings = {name: getattr(old, name) for name in _DOCUMENT_SETTINGS}
        after_settings = {**before_settings, **settings}
        session.replace(**after_settings)
        form = session.form
        before = form.snapshot()
        form.load(plan.extraction)
        summary = summarize(entry)
        text = f"Open run of {summary.when}"
        self.stack.push(OpenRunCommand(session, text, before_settings, after_settings, form, before,
                                       form.snapshot(), say=say))
        say(f"Opened the run of {summary.when} ({summary.what}, {summary.mode}) into the form{note};"
            " Edit → Undo puts the form back")
        return True


def _changed_note(name: str, text: str, sha256: str | None) -> str:
    """The words added when a run's document has changed since the run ("" when it has not)."""
    if sha256 is not None and text_sha256(text) != sha256:
        return f" ({name} has changed since this run: the values are the run's)"
    return ""
