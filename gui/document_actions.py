"""Your own document: File → Open document…, Edit → Paste document, a file dropped on the window.

How this works
--------------
`DocumentActions(window, session, bar, source, ...)` turns each way in into one `livefill.extraction.documents` call and one
session intent: `session.replace(document=text, document_name=name, document_path=path)`. A file
is read off the GUI thread (`asyncio.to_thread`: a PDF's text extraction can take seconds), so
the window keeps painting; the bar over the source pane says "reading NAME…" meanwhile. Every
`DocumentError` (and a change refused while a run is active) is one line in the status bar and
the run log, and the document shown before stays: nothing is lost.

`render()` draws the session's document: the source pane shows exactly the text that will be
sent (`Session.document()`), the bar its name and `describe_size` for the current provider. The
`Document` last loaded is kept only to describe it (its page count); it is never a setting.
Choosing a bundled scenario in the toolbar's picker goes back to the scenario's document.

File → Open schema… makes a JSON Schema file of one's own the schema (`open_schema`): it is
checked with `livefill.extraction.user_schema.resolve_schema` first (fast: on the GUI thread), so a schema
livefill cannot use is one line naming its keyword and pointer, and the schema before stays.
The bar says which schema is in use; choosing a bundled scenario goes back to its schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QObject, QStandardPaths, Qt, Signal
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow

from livefill.errors import InputError
from livefill.extraction.schemas import is_schema_path, resolve_schema
from livefill.extraction.documents import SUPPORTED_SUFFIXES, Document, DocumentError, describe_size, document_from_text, load_document
from livefill.extraction.scenarios import get_scenario
from livefill.session.session import Session
from livefill.widgets.document_bar import DocumentBar
from livefill.widgets.run_log import RunLog
from livefill.widgets.source_view import SourceView

__all__ = ["DocumentActions", "FILE_FILTER", "SCHEMA_FILTER", "start_folder"]

FILE_FILTER = "Documents (" + " ".join(f"*{s}" for s in SUPPORTED_SUFFIXES) + ");;All files (*)"

SCHEMA_FILTER = "JSON Schema (*.json);;All files (*)"

BUSY = "Stop the run before changing the document."
BUSY_SCHEMA = "Stop the run before changing the schema."


def start_folder(first: Path | None = None) -> str:
    """Where an Open dialog starts: `first` (the folder of the file open now), else the Documents
    folder, else home -- the first that exists. (Given a folder that is not there, Qt's dialog
    starts elsewhere and puts the folder's name in the file name box.)"""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    for folder in (first, Path(documents) if documents else None):
        if folder is not None and folder.is_dir():
            return str(folder)
    return str(Path.home())


class DocumentActions(QObject):
    """Loads documents into `session` and renders its document (see the module docstring).

    Signals: `loaded(str)` (the name of a document now in the session), `failed(str)` (the one
    line said to the user), `schemaLoaded(str)` (the name of a schema file now in use).
    """

    loaded = Signal(str)
    failed = Signal(str)
    schemaLoaded = Signal(str)  # noqa: N815 - Qt signal naming

    def __init__(self, window: QMainWindow, session: Session, bar: DocumentBar, source: SourceView, *,
                 run_log: RunLog, commit_edits: Callable[[], None]) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.bar = bar
        self.source = source
        self.run_log = run_log
        self.commit_edits = commit_edits  # sends every edit still in progress to its form
        self._last: Document | None = None
        self._said: str | None = None  # the last complaint shown in the status bar (see _unsay)
        self._kept_note: str | None = None  # the last "values are kept" line shown (see use)
        self._tasks: set[asyncio.Task[Any]] = set()
        bar.openRequested.connect(self.ask_open)
        bar.pasteRequested.connect(self.paste)

    # -- rendering -------------------------------------------------------------------------------

    def render(self) -> None:
        """Show the session's document and its size for the session's provider."""
        self.render_schema()
        s = self.session.settings
        text = self.session.document()
        if self.source.toPlainText() != text:
            self.source.show_document(text)
        own = s.document is not None
        if own:
            doc = self._last if self._last is not None and self._last.text == text else None
            name = s.document_name or "Your document"
        else:
            doc = None
            name = f"{s.scenario} — {get_scenario(s.scenario).title}"
        try:
            doc = doc or document_from_text(text, name=name)
        except DocumentError:
            self.bar.show_document(name, "empty", own=own)
            return
        self.bar.show_document(name, describe_size(doc, s.provider), own=own)

    def render_schema(self) -> None:
        """Say which schema the form and the request use."""
        s = self.session.settings
        name = self.session.schema_name()
        if s.schema_name is not None and is_schema_path(s.schema_name):
            self.bar.show_schema(Path(s.schema_name).name, own=True, where=s.schema_name)
        else:  # a bundled schema: said when it reads a document that is not its scenario's
            self.bar.show_schema(name, own=False, shown=s.document is not None or s.schema_name is not None)

    # -- your schema -----------------------------------------------------------------------------

    def ask_open_schema(self) -> None:
        """File → Open schema…: a file dialog for a JSON Schema file (never a nested event loop)."""
        current = self.session.settings.schema_name
        start = start_folder(Path(current).parent if current and is_schema_path(current) else None)
        dialog = QFileDialog(self.window, "Open a JSON Schema", start, SCHEMA_FILTER)
        dialog.setObjectName("openSchemaDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda chosen: self.open_schema(chosen) if chosen else None)
        dialog.open()

    def open_schema(self, path: str | Path) -> bool:
        """Make the JSON Schema file at `path` the schema; False (one line said, the schema
        before kept) when it cannot be used or a run is active."""
        if self.session.active:
            self.fail(BUSY_SCHEMA)
            return False
        resolved = str(Path(path).expanduser().resolve())
        try:
            resolve_schema(resolved)
            self.session.replace(schema_name=resolved)
        except InputError as exc:
            self.fail(str(exc), what="schema")
            return False
        self._unsay()
        self.render_schema()
        self.schemaLoaded.emit(Path(resolved).name)
        return True

    # -- ways in ---------------------------------------------------------------------------------

    def ask_open(self) -> None:
        """File → Open document…: a file dialog (never a nested event loop)."""
        folder = self.session.settings.document_path
        start = start_folder(Path(folder).parent if folder else None)
        dialog = QFileDialog(self.window, "Open a document", start, FILE_FILTER)
        dialog.setObjectName("openDocumentDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda chosen: self.open_path(chosen) if chosen else None)
        dialog.open()

    def open_path(self, path: str | Path) -> asyncio.Task[Document | None] | None:
        """Read the file at `path` off the GUI thread and make it the document; the task."""
        if self.session.active:
            self.fail(BUSY)
            return None
        path = Path(path)
        self.bar.show_loading(path.name or str(path))
        task = asyncio.ensure_future(self.load(path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def load(self, path: Path) -> Document | None:
        """Read `path` (in a worker thread) and use it; None (and one line said) when it cannot be."""
        try:
            doc = await asyncio.to_thread(load_document, path)
        except DocumentError as exc:
            self.render()
            self.fail(exc.message)
            return None
        return doc if self.use(doc) else None

    def paste(self) -> None:
        """Edit → Paste document: the clipboard's file (a copied file) or its text."""
        self.take_mime(QApplication.clipboard().mimeData(), text_name="Pasted text")

    def take_mime(self, mime: QMimeData | None, *, text_name: str) -> bool:
        """A file (the first local one) or text from a paste or a drop; False if it had neither."""
        if mime is not None and mime.hasUrls():
            files = [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]
            if files:
                self.open_path(files[0])
                return True
        text = mime.text() if mime is not None and mime.hasText() else ""
        try:
            doc = document_from_text(text, name=text_name)
        except DocumentError as exc:
            self.fail(exc.message)
            return False
        return self.use(doc)

    @staticmethod
    def accepts(mime: QMimeData | None) -> bool:
        """Whether a drag carries something that can become the document (a local file or text)."""
        if mime is None:
            return False
        if mime.hasUrls() and any(url.isLocalFile() for url in mime.urls()):
            return True
        return mime.hasText()

    def use(self, doc: Document) -> bool:
        """Make `doc` the session's document; False (said) if a run is active."""
        if self.session.active:
            self.fail(BUSY)
            return False
        self._last = doc
        session = self.session
        self.commit_edits()  # a value still being typed belongs to the form it was typed in (it was lost)
        bar = self.window.statusBar()
        if self._kept_note is not None and bar.currentMessage() == self._kept_note:
            bar.clearMessage()  # about the document before: no longer true
        self._kept_note = None
        before = session.form
        lanes_had_results = any(lane.has_form and lane.form.committed for lane in session.compare_lanes)
        old = session.settings
        old_name = old.document_name or old.scenario if old.document is not None else old.scenario
        session.replace(document=doc.text, document_name=doc.name,
                        document_path=str(doc.path.resolve()) if doc.path is not None else None)
        self._unsay()
        self.render()
        # the form changed under the user: say where the values they saw went
        if session.comparing:
            if lanes_had_results:
                self._kept_note = f"Every lane now reads {doc.name}: the lanes' results for {old_name} are cleared"
        elif session.form is not before and before.committed:
            self._kept_note = f"{doc.name} has a form of its own; the values of {old_name} are kept and come back with it"
        if self._kept_note is not None:
            bar.showMessage(self._kept_note, 10000)
        self.loaded.emit(doc.name)
        return True

    def fail(self, message: str, *, what: str = "document") -> None:
        """Say one line in the status bar and the run log; the document (or schema) shown stays."""
        message = " ".join(message.split())
        self._said = message
        self.window.statusBar().showMessage(message, 15000)
        self.run_log.addItem(f"{what}: {message}")
        self.run_log.scrollToBottom()
        self.failed.emit(message)

    def _unsay(self) -> None:
        """A document or schema was taken: the status bar's complaint about the last try is no longer true."""
        bar = self.window.statusBar()
        if self._said is not None and bar.currentMessage() == self._said:
            bar.clearMessage()
        self._said = None

    async def wait(self) -> None:
        """Wait for every file being read."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
