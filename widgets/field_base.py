"""The common part of every field widget: label, editor, state marker, and the `state` property.

How this works
--------------
A field widget renders one pointer of a `FormModel`. On every (per-frame) update that touches its
pointer it reads the model — state, display text, reason — and sets the dynamic properties
`state` (empty / pending / provisional / settled / invalid) and `displayValue` on itself and its
children, then unpolishes/polishes them so the QSS in assets/styles keyed on `[state="..."]`
applies. A state is never shown by colour alone: the marker label beside the editor says it in
text too ("… still arriving", "✓", "✗ invalid", "waiting"; "more to come" for a container that
holds parts but is not settled, in a reader that never shows provisional values). A value the
user typed (the model's `Origin.USER`) says "✎ yours" instead of "✓", and the widgets carry an
`origin` property ("user",
"extracted" or "") for the QSS, so a typed value never looks like a settled extracted one. When a
value settles during a run the widget sets `flash="on"` for a moment (the short highlight when it
lands), and arms the form's `PaintProbe` on its marker: the marker's next paint is when the user
sees the value settled. Once a run committed and was scored against the expected answer
(livefill.session.expected_answer.form_marks), the marker says "✓ right" or "✗ wrong" (a table or
list: "✗ 1 of 12 wrong"), the tooltip the expected value, and the `answer` property ("right",
"wrong", "") keys the QSS; the marks go when the form changes.

Subclasses provide the editor (`make_editor`), show a value in it (`show_value`) and turn the
user's input back into a value (`read_edit`). The widget owns no business state: edits go straight
to the model (`FormModel.set_value`), which is refused while a run is active (editors are
read-only then).
"""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QSizePolicy, QVBoxLayout, QWidget

from livefill.extraction.form import FieldState, FormModel, Origin
from livefill.extraction.json_doc import MISSING
from livefill.extraction.schema import FieldKind, FieldSpec
from livefill.session.expected_answer import FieldMark, field_mark, form_marks
from livefill.widgets.form_signals import FormSignals
from livefill.widgets.value_tips import watch

MARKERS: dict[FieldState, str] = {
    FieldState.EMPTY: "",
    FieldState.PENDING: "◌ waiting",
    FieldState.PROVISIONAL: "… still arriving",
    FieldState.SETTLED: "✓",
    FieldState.INVALID: "✗ invalid",
}

USER_MARKER = "✎ yours"
"""The marker of a settled value the user typed (not extracted by a run)."""

FILLING_MARKER = "◌ more to come"
"""The marker of a PENDING table, list or group that already holds settled parts: a reader that
never shows provisional values (settled mode) leaves a container PENDING until it settles whole,
while its rows arrive one by one. "waiting" (no value yet) would be untrue there."""

PLACEHOLDERS: dict[FieldState, str] = {
    FieldState.PENDING: "waiting for its value…",
}

FLASH_MS = 700
_CONTAINERS = (FieldKind.OBJECT, FieldKind.TABLE, FieldKind.CHIPS)  # their leaves report their own paints
LABEL_WIDTH = 130


def repolish(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property changed."""
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)


class FieldWidget(QFrame):
    """One field of the form, rendering `pointer` of `form` (see the module docstring)."""

    stacked = False  # True: label above the editor (prose, tables); False: label beside it
    answer_marked = True  # marked right / wrong against the expected answer (a group: its fields are)

    def __init__(
        self,
        spec: FieldSpec,
        form: FormModel,
        signals: FormSignals,
        pointer: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.spec = spec
        self.form = form
        self.signals = signals
        self.pointer = pointer if pointer is not None else spec.pointer
        self.setObjectName(f"field:{self.pointer}")
        self.setProperty("role", "field")
        self.setProperty("fieldKind", spec.kind.value)
        self._state: FieldState | None = None
        self._updating = False

        self.label = QLabel(spec.label + ("" if spec.required else " (optional)"))
        self.label.setObjectName("fieldLabel")
        self.label.setToolTip(spec.description or spec.label)
        self.marker = QLabel("")
        self.marker.setObjectName("fieldMarker")
        self.marker.setMinimumWidth(110)
        self.marker.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.editor = self.make_editor()
        if not self.editor.objectName():  # a table keeps its own name ("fieldTable": its style, its tips)
            self.editor.setObjectName("fieldEditor")
        if isinstance(self.editor, QLineEdit):
            watch(self.editor)  # a long value is cut: whole in its tooltip (livefill.widgets.value_tips)

        self.label_above = False  # set_label_above: a narrow compare lane puts it over the editor
        self.setProperty("labelAbove", False)
        self._lay_out(self.stacked)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.setInterval(FLASH_MS)
        self._flash_timer.timeout.connect(self._end_flash)
        self.setProperty("flash", "off")

        signals.updated.connect(self._on_updated)
        signals.runningChanged.connect(self._on_running)
        self.setProperty("answer", "")
        self.marks = form_marks(form)
        if self.answer_marked:
            unsubscribe = self.marks.subscribe(self.refresh)
            self.destroyed.connect(lambda *_: unsubscribe())
        self._on_running(form.running)
        self.refresh()

    def _lay_out(self, above: bool) -> None:
        """Label and marker over the editor (`above`), or label, editor and marker in one row."""
        if above:
            outer = QVBoxLayout(self)
            head = QHBoxLayout()
            head.addWidget(self.label)
            head.addStretch(1)
            head.addWidget(self.marker)
            outer.addLayout(head)
            outer.addWidget(self.editor)
        else:
            outer = QHBoxLayout(self)
            self.label.setFixedWidth(LABEL_WIDTH)
            outer.addWidget(self.label)
            outer.addWidget(self.editor, 1)
            outer.addWidget(self.marker)
        outer.setContentsMargins(6, 3, 6, 3)
        outer.setSpacing(6)

    def set_label_above(self, above: bool) -> None:
        """Put a one-row field's label over its editor (a narrow compare lane: the value gets the
        row's whole width), or back beside it. Stacked kinds have theirs above always."""
        if self.stacked or above == self.label_above:
            return
        self.label_above = above
        shiboken6.delete(self.layout())  # a layout owns no widget: the label, editor and marker stay
        self._lay_out(above)
        self.setProperty("labelAbove", above)
        repolish(self.label)
        if above:  # no fixed label width over the editor (a style sheet's included)
            self.label.setMinimumWidth(0)
            self.label.setMaximumWidth(16777215)
        else:
            self.label.setFixedWidth(int(self.property("labelWidth") or LABEL_WIDTH))

    # -- to be provided by each kind ----------------------------------------------------------

    def make_editor(self) -> QWidget:
        """The widget that shows (and lets the user edit) the value."""
        raise NotImplementedError

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        """Show `text` (the model's display text; `value` is the raw value or MISSING)."""
        raise NotImplementedError

    def set_editable(self, editable: bool) -> None:
        """Make the editor editable (no run active) or read-only."""
        self.editor.setEnabled(editable)

    # -- rendering ----------------------------------------------------------------------------

    @property
    def state(self) -> FieldState:
        """The state this widget shows now."""
        return self._state or FieldState.EMPTY

    def _on_updated(self, pointers: set[str], reset: bool) -> None:
        if reset or self.pointer in pointers or self.watches(pointers):
            self.refresh()

    def watches(self, pointers: set[str]) -> bool:
        """True if a change of one of `pointers` concerns this widget (beyond its own pointer)."""
        return False

    def _on_running(self, running: bool) -> None:
        self.set_editable(not running)

    def refresh(self) -> None:
        """Read the model and show it (value, state property, marker, reason tooltip)."""
        form = self.form
        state = form.state(self.pointer)
        value = form.value(self.pointer)
        text = form.display(self.pointer)
        previous = self._state
        self._state = state
        self._updating = True
        try:
            self.show_value(text, value, state)
        finally:
            self._updating = False
        marking = form.marking
        shown_state = state.value if marking or state is FieldState.INVALID else ("settled" if value is not MISSING else "empty")
        marker = MARKERS[state] if marking or state is FieldState.INVALID else ""
        origin = form.origin(self.pointer) if value is not MISSING else None
        if marker and state is FieldState.SETTLED and origin is Origin.USER:
            marker = USER_MARKER
        elif marker and state is FieldState.PENDING and isinstance(value, (list, dict)) and value:
            marker = FILLING_MARKER
        origin_name = origin.value if origin is not None and marking else ""
        reason = form.reason(self.pointer)
        tip = reason if state is FieldState.INVALID and reason else (self.spec.description or "")
        mark = self.answer_mark()
        if mark is not None:
            marker = mark.text
            tip = mark.tip + (f"\n{tip}" if tip else "")
        self.marker.setText(marker)
        self.marker.setToolTip(tip)
        self.setToolTip(tip)
        self.editor.setToolTip(tip)
        if self.property("answer") != (mark.answer if mark is not None else ""):
            self._set_answer_property(mark.answer if mark is not None else "")
        changed = self.property("state") != shown_state or self.property("origin") != origin_name  # QSS keys on these
        self.setProperty("origin", origin_name)
        if self.property("displayValue") != text:
            self.setProperty("displayValue", text)
        if state is FieldState.SETTLED and previous not in (None, FieldState.SETTLED) and marking:
            if form.running:
                self._start_flash()
                changed = True
            if self.spec.kind not in _CONTAINERS:
                self.signals.paint_probe.arm(self.marker, self.pointer)  # "✓": byte-to-pixel's paint
        if changed:
            self._set_state_property(shown_state)

    def answer_mark(self) -> FieldMark | None:
        """This field's mark against the expected answer (None: not scored, or no marks now)."""
        if not self.answer_marked:
            return None
        return field_mark(self.marks.of(self.pointer), self.pointer)

    def _set_answer_property(self, answer: str) -> None:
        self.setProperty("answer", answer)
        for w in (self, self.marker, self.editor):
            w.setProperty("answer", answer)
            repolish(w)

    def _set_state_property(self, value: str) -> None:
        origin = self.property("origin") or ""
        for w in (self, self.label, self.marker, self.editor, *self.extra_styled()):
            w.setProperty("state", value)
            w.setProperty("origin", origin)
            w.setProperty("flash", self.property("flash"))
            repolish(w)

    def extra_styled(self) -> tuple[QWidget, ...]:
        """More child widgets that carry the `state` property."""
        return ()

    def _start_flash(self) -> None:
        self.setProperty("flash", "on")
        self._flash_timer.start()

    def _end_flash(self) -> None:
        self.setProperty("flash", "off")
        self._set_state_property(str(self.property("state")))

    # -- user edits ---------------------------------------------------------------------------

    def commit_pending_edit(self) -> None:
        """Send an edit still in progress in the editor (typed, not yet confirmed by Return or by
        leaving the field) to the model, so that a run started now snapshots it."""
        self._edited()

    def _edited(self) -> None:
        """A kind whose editor holds text until confirmed sends it to the model here (once: the
        editor's modified flag is cleared); kinds that apply each click at once have nothing."""

    def apply_edit(self, value: Any, invalid_reason: str | None = None) -> None:
        """Send the user's edit to the model (ignored while the widget itself is updating)."""
        if self._updating or self.form.running:
            return
        if value is MISSING:
            self.form.clear_value(self.pointer)
        else:
            self.form.set_value(self.pointer, value, invalid_reason=invalid_reason)
