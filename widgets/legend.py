"""The legend over the single form: what each field marker means, in one compact line.

Each entry is the very marker a field shows (same text, same `state` / `origin` properties, so the
QSS that colours a field's marker colours the legend's), followed by a few words. Its hide button
(and View ▸ Legend) hides it; the window remembers the choice. For a mode that shows no marks
(naive) `set_marking(False)` says so instead. While the form shows a committed run scored against
its expected answer (`follow(lane)`: the lane's form's `form_marks`), one more entry, last, says
"✓ right / ✗ wrong" (the expected value is in each field's tooltip; words after it would widen
the legend's least width and squeeze the source pane); its place is kept while it is hidden, so
scoring never re-flows the legend nor widens it. The legend owns no business state: it renders the marks it follows.
It is never narrower than its entries on `MAX_LINES` lines (its minimum width keeps the form's
pane that wide), so it never grows into a column over the form.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from livefill.extraction.form import FieldState
from livefill.session.expected_answer import FormMarks, form_marks
from livefill.session.lane import LaneEvent, LaneFormReplaced, SessionLane
from livefill.widgets.field_base import MARKERS, USER_MARKER, repolish
from livefill.widgets.flow_layout import FlowLayout

__all__ = ["Legend", "ENTRIES", "MAX_LINES", "SCORED_ENTRY"]

MAX_LINES = 2
"""The legend's entries take at most this many lines: its minimum width."""

#: (marker text, state property, origin property, what it means, the longer tooltip)
ENTRIES: tuple[tuple[str, str, str, str, str], ...] = (
    (MARKERS[FieldState.SETTLED], "settled", "extracted", "final, from the model",
     "The value's last byte arrived and it passed its field's check: it will not change."),
    (MARKERS[FieldState.PROVISIONAL], "provisional", "extracted", "may change",
     "Part of the value has arrived; it may grow or change before it settles."),
    (MARKERS[FieldState.PENDING], "pending", "", "no value yet",
     "The model has started this field: its name arrived, no byte of its value yet."),
    (MARKERS[FieldState.INVALID], "invalid", "", "failed its check",
     "The value does not fit its field (hover the field for the reason)."),
    (USER_MARKER, "settled", "user", "typed by you",
     "A value you entered. A run keeps it aside and gives it back if the run ends without a result."),
)

#: the entry shown while the form is scored: (marker, `answer` property) pairs, what they mean, the tooltip
SCORED_ENTRY: tuple[tuple[tuple[str, str], ...], str, str] = (
    (("✓ right", "right"), ("✗ wrong", "wrong")), "",
    "The committed run, checked field by field against the document's expected answer "
    "(File ▸ Expected answer): hover a field for the expected value.",
)


def _glyph(marker: str, tip: str, **properties: str) -> QLabel:
    """A marker styled exactly as a field's (objectName `fieldMarker`, the same QSS properties)."""
    glyph = QLabel(marker)
    glyph.setObjectName("fieldMarker")
    for name, value in properties.items():
        glyph.setProperty(name, value)
    glyph.setToolTip(tip)
    repolish(glyph)
    return glyph


def _text(words: str, tip: str) -> QLabel:
    text = QLabel(words)
    text.setObjectName("legendText")
    text.setToolTip(tip)
    return text


def _entry(*parts: QLabel) -> QWidget:
    """One entry of the legend: its markers and words side by side."""
    entry = QWidget()
    pair = QHBoxLayout(entry)
    pair.setContentsMargins(0, 0, 10, 0)
    pair.setSpacing(4)
    for part in parts:
        pair.addWidget(part)
    return entry


class Legend(QFrame):
    """One line of markers and their meaning, with a hide button. Signal: `hideRequested()`."""

    hideRequested = Signal()  # noqa: N815 - Qt signal naming

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("legend")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 2, 4, 2)
        row.setSpacing(4)
        entries = QWidget()
        flow = FlowLayout(entries, spacing=2)  # wraps onto a second line in a narrow pane
        flow.setContentsMargins(0, 0, 0, 0)
        row.addWidget(entries, 1)
        self.entries = entries
        self.flow = flow
        self.no_marks = QLabel("naive mode shows no marks: every value looks final (incorrect on purpose)")
        self.no_marks.setObjectName("legendText")
        self.no_marks.setWordWrap(True)
        self.no_marks.hide()
        row.addWidget(self.no_marks, 1)
        self.markers: list[QLabel] = []
        for marker, state, origin, words, tip in ENTRIES:
            glyph = _glyph(marker, tip, state=state, origin=origin)
            flow.addWidget(_entry(glyph, _text(words, tip)))
            self.markers.append(glyph)
        self.scored = self._scored_entry()
        flow.addWidget(self.scored)
        self._marking, self._scored = True, False
        self._lane: SessionLane | None = None
        self._marks: FormMarks | None = None
        self._unsubscribe: list[Callable[[], None]] = []  # from the lane, then from its form's marks
        subscriptions = self._unsubscribe
        self.destroyed.connect(lambda *_: [unsubscribe() for unsubscribe in subscriptions])
        self.hide_button = QToolButton()
        self.hide_button.setObjectName("legendHide")
        self.hide_button.setText("✕")
        self.hide_button.setAutoRaise(True)
        self.hide_button.setToolTip("Hide the legend (View ▸ Legend shows it again)")
        self.hide_button.setAccessibleName("Hide the legend")
        self.hide_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide_button.clicked.connect(self.hideRequested)
        row.addWidget(self.hide_button, 0, Qt.AlignmentFlag.AlignTop)
        self.row = row
        # as wide as the pane gives it, never narrower than MAX_LINES lines of entries
        self.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)

    def _scored_entry(self) -> QWidget:
        markers, words, tip = SCORED_ENTRY
        (right, right_answer), (wrong, wrong_answer) = markers
        parts = [_glyph(right, tip, answer=right_answer), _text("/", tip), _glyph(wrong, tip, answer=wrong_answer)]
        entry = _entry(*parts, *([_text(words, tip)] if words else []))
        policy = entry.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # hidden, it keeps its place: scoring never re-flows the legend
        entry.setSizePolicy(policy)
        entry.hide()
        return entry

    def set_marking(self, marking: bool) -> None:
        """Explain the marks (True), or say that the form's mode shows none (False)."""
        self._marking = marking
        self._render()

    def set_scored(self, scored: bool) -> None:
        """Explain the right / wrong marks (True: the form shows a scored run), or not."""
        self._scored = scored
        self._render()

    def _render(self) -> None:
        marking, scored = self._marking, self._scored
        for i in range(len(ENTRIES)):
            self.flow.itemAt(i).widget().setVisible(marking)
        policy = self.scored.sizePolicy()
        policy.setRetainSizeWhenHidden(marking)  # among the marks: its place kept; alone (naive): none
        self.scored.setSizePolicy(policy)
        self.scored.setVisible(scored)
        self.entries.setVisible(marking or scored)
        self.no_marks.setVisible(not marking)
        self.flow.invalidate()
        self.updateGeometry()

    def follow(self, lane: SessionLane) -> None:
        """Show the scored entry while `lane`'s form (whichever it shows) is marked right / wrong."""
        self._unfollow()
        self._lane = lane
        self._unsubscribe.append(lane.subscribe(self._on_lane))
        self._on_lane(None)

    def _unfollow(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    def _on_lane(self, event: LaneEvent | None) -> None:
        if event is not None and not isinstance(event, LaneFormReplaced) or self._lane is None:
            return
        for unsubscribe in self._unsubscribe[1:]:  # from the marks of the form shown before
            unsubscribe()
        del self._unsubscribe[1:]
        self._marks = form_marks(self._lane.form) if self._lane.has_form else None
        if self._marks is not None:
            self._unsubscribe.append(self._marks.subscribe(self._on_marks))
        self._on_marks()

    def _on_marks(self) -> None:
        self.set_scored(self._marks is not None and self._marks.score is not None)

    def text(self) -> str:
        """Everything the legend says now, in reading order (tests, accessibility)."""
        said = [f"{m} {w}" for m, _, _, w, _ in ENTRIES] if self._marking else []
        if self._scored:
            markers, words, _ = SCORED_ENTRY
            said.append(" / ".join(m for m, _ in markers) + f" {words}")
        if not self._marking:
            said.append(self.no_marks.text())
        return "  ".join(said)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        hint = super().minimumSizeHint()
        if not self.entries.isVisibleTo(self):
            return hint
        m = self.row.contentsMargins()
        width = (m.left() + self.flow.width_for_lines(MAX_LINES) + self.row.spacing()
                 + self.hide_button.sizeHint().width() + m.right())
        return QSize(max(hint.width(), width), hint.height())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return self.minimumSizeHint()  # no wider: the legend never widens the window

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt API)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt API)
        return self.layout().heightForWidth(width)
