"""The line over the source pane: which document will be sent, its size and token estimate.

`DocumentBar.show_document(name, size, own=...)` renders it ("invoice.pdf  ·  12.3 KB · ≈3,100
tokens"); `show_schema(name, own=...)` which schema the form and the request use ("schema:
receipt.schema.json"); `show_loading(name)` while a file is read. Its Open… and Paste buttons only ask
(`openRequested`, `pasteRequested`): the window loads the document into the session.

Where the bar is narrow (presentation mode, the History panel open) the name goes last: first it
loses its prefix ("Scenario: invoice…", then "invoice…"), then the size its bytes ("≈359 tokens"),
then the schema line goes, then the size when that lets the name be whole; only then is the name
elided with "…" (the size staying while the name keeps two thirds of the bar). Every label cut or shortened
shows its whole text in its tooltip; none is ever cut mid-word.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolButton, QWidget

from livefill.widgets.elided_label import ElidedLabel
from livefill.widgets.turn_timer import next_turn_timer

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
        self.size_label = ElidedLabel()  # sized by _fit, as is the schema line; the name takes the rest
        self.size_label.setObjectName("documentSize")
        self.schema_label = ElidedLabel()
        self.schema_label.setObjectName("schemaName")
        for label in (self.size_label, self.schema_label):
            # as wide as _fit says at most, narrower (elided) only while the bar is being laid out:
            # the bar's least width never depends on the texts (a narrow pane can always have it)
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._schema_shown = True
        self._fit_timer = next_turn_timer(self, self._fit)
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
        self.name_label.set_shorter(("Yours: " if own else "Scenario: ") + name, ("✎ " if own else "") + name)
        self.size_label.setText(size)
        self.size_label.set_shorter(*([size.rsplit(" · ", 1)[-1]] if " · " in size else []))
        self.setProperty("own", own)
        self._fit()

    def show_schema(self, name: str, *, own: bool, where: str | None = None, shown: bool = True) -> None:
        """Show the schema in use (`own`: a JSON Schema file of one's own, `where` its path;
        `shown` False: the line is kept but hidden, when the scenario's own schema goes without saying)."""
        self.schema_label.setText(f"schema: {name}")
        self.schema_label.setToolTip(f"Your JSON Schema file {where}" if own and where else
                                     ("Your JSON Schema" if own else f"The bundled {name} schema"))
        self.schema_label.setProperty("own", own)
        self._schema_shown = shown
        self.schema_label.setVisible(shown)
        self._fit()

    def schema_text(self) -> str:
        """The schema line as plain text."""
        return self.schema_label.text()

    def show_loading(self, name: str) -> None:
        """A file is being read."""
        self.size_label.setText(f"reading {name}…")
        self.size_label.set_shorter("reading…")
        self._fit()

    def name_text(self) -> str:
        """The name line as plain text."""
        return self._name

    def set_enabled(self, enabled: bool) -> None:
        """Grey out the buttons while a run is active (the document cannot change then)."""
        self.open_button.setEnabled(enabled)
        self.paste_button.setEnabled(enabled)

    # -- what fits ------------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_timer.start()  # once the labels have their new fonts too

    def _fit(self) -> None:
        """Give the size and schema lines their widths (see the module docstring); the name
        takes the rest, in the longest of its forms that fits."""
        layout = self.layout()
        margins = layout.contentsMargins()
        buttons = [b for b in (self.open_button, self.paste_button) if not b.isHidden()]
        room = self.width() - margins.left() - margins.right() - sum(b.sizeHint().width() for b in buttons)
        room -= layout.spacing() * (len(buttons) + 1)
        names, sizes = self.name_label.form_widths(), self.size_label.form_widths()
        schema = self.schema_label.form_widths()[0] + layout.spacing() if self._schema_shown else 0
        plans = [(n, sizes[0], schema) for n in names] + [(names[-1], sizes[-1], schema), (names[-1], sizes[-1], 0), (names[-1], 0, 0)]
        size, schema = next(((s, c) for n, s, c in plans if n + s + c <= room), (0, 0))
        if size == 0 and 3 * sizes[-1] <= room:
            size = sizes[-1]  # the name is elided in any case: the size stays while the name keeps 2/3 of the bar
        self.size_label.setMaximumWidth(size)
        self.size_label.setVisible(size > 0)
        self.schema_label.setMaximumWidth(max(0, schema - layout.spacing()))
        self.schema_label.setVisible(self._schema_shown and schema > 0)
        # never squeezed away (its width policy ignores its size hints): a few characters at least
        self.name_label.setMinimumWidth(min(self.name_label.minimumSizeHint().width(), names[-1]))
