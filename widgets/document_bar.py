"""The line over the source pane: which document will be sent, its size and token estimate.

`DocumentBar.show_document(name, size, own=...)` renders it ("invoice.pdf  ·  12.3 KB · ≈3,100
tokens"); `show_schema(name, own=...)` which schema the form and the request use ("schema:
receipt.schema.json"); `show_loading(name)` while a file is read. Its Open… and Paste buttons only ask
(`openRequested`, `pasteRequested`): the window loads the document into the session.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from livefill.widgets.elided_label import ElidedLabel

__all__ = ["DocumentBar"]


class DocumentBar(QWidget):
    """Names the document shown in the source pane and its size (see the module docstring)."""

    openRequested = Signal()  # noqa: N815 - Qt signal naming
    pasteRequested = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 3, 6, 3)
        layout.setSpacing(8)
        self.name_label = ElidedLabel()  # a long name ends in "…" (it was cut mid-letter), whole in the tooltip
        self.name_label.setObjectName("documentName")
        bold = self.name_label.font()
        bold.setBold(True)
        self.name_label.setFont(bold)
        self.size_label = QLabel()
        self.size_label.setObjectName("documentSize")
        self.schema_label = QLabel()
        self.schema_label.setObjectName("schemaName")
        self.open_button = QToolButton()
        self.open_button.setObjectName("openDocumentButton")
        self.open_button.setText("Open…")
        self.open_button.setToolTip("Open a .txt, .md or .pdf document (Ctrl+O), or drop a file on the window")
        self.open_button.clicked.connect(self.openRequested)
        self.paste_button = QToolButton()
        self.paste_button.setObjectName("pasteDocumentButton")
        self.paste_button.setText("Paste")
        self.paste_button.setToolTip("Use the text on the clipboard as the document")
        self.paste_button.clicked.connect(self.pasteRequested)
        self._name = ""
        layout.addWidget(self.name_label, 1)
        layout.addWidget(self.size_label)
        layout.addWidget(self.schema_label)
        layout.addWidget(self.open_button)
        layout.addWidget(self.paste_button)

    def show_document(self, name: str, size: str, *, own: bool) -> None:
        """Show the document's name (marked as one's own, or a bundled scenario's) and size line."""
        prefix = "Your document: " if own else "Scenario document: "
        self._name = prefix + name
        self.name_label.setText(self._name)
        self.size_label.setText(size)
        self.setProperty("own", own)

    def show_schema(self, name: str, *, own: bool, where: str | None = None, shown: bool = True) -> None:
        """Show the schema in use (`own`: a JSON Schema file of one's own, `where` its path;
        `shown` False: the line is kept but hidden, when the scenario's own schema goes without saying)."""
        self.schema_label.setText(f"schema: {name}")
        self.schema_label.setToolTip(f"Your JSON Schema file {where}" if own and where else
                                     ("Your JSON Schema" if own else f"The bundled {name} schema"))
        self.schema_label.setProperty("own", own)
        self.schema_label.setVisible(shown)

    def schema_text(self) -> str:
        """The schema line as plain text."""
        return self.schema_label.text()

    def show_loading(self, name: str) -> None:
        """A file is being read."""
        self.size_label.setText(f"reading {name}…")

    def name_text(self) -> str:
        """The name line as plain text."""
        return self._name

    def set_enabled(self, enabled: bool) -> None:
        """Grey out the buttons while a run is active (the document cannot change then)."""
        self.open_button.setEnabled(enabled)
        self.paste_button.setEnabled(enabled)
