"""The side-by-side metrics table under the compare-view lanes.

`MetricsTable` renders one column per lane, one row per figure of `livefill.session.metrics.MetricsSummary`,
the figures a comparison is about first (a short table shows them): first visible value, byte to
pixel (from the network read carrying a value's settling byte to the paint showing it settled:
p50 / p99, the worst in the tooltip), all settled, values shown that were never true (the four the
demo script points at), the fields right against the expected answer (— without one), first
settled value, deltas (or relay records) and bytes on the wire, tokens in / out (where the
provider reports them), cost (only with the person's price for the lane's model), provisional
later changed, values shown, and how the run ended. It owns no business state: `set_lanes([(title, metrics)])` and it follows the metrics
(refreshing at most every `refresh_ms`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from livefill.session.metrics import LaneMetrics, MetricsSummary, format_ms, format_seconds
from livefill.session.prices import format_cost
from livefill.wording import plural

__all__ = ["MetricsTable", "ROWS"]


def _never(s: MetricsSummary) -> str:
    if not s.started:
        return "—"
    if s.final_known:  # judged against the run's own final values: now it may accuse
        return ("⚠ " if s.never_true else "") + str(s.never_true)
    return f"{s.never_true} so far"  # only what the run has contradicted yet: no sign, no bold


def _never_tip(s: MetricsSummary) -> str:
    if not s.started:
        return "Values the lane showed as if final that differ from the run's own final values"
    if s.final_known:
        shown = ", ".join(f"{p} = {v!r}" for p, v in s.examples)
        return f"{s.never_true} values shown as if final differ from this run's own final values" + (
            f", e.g. {shown}" if shown else "")
    judged = "once it commits" if s.outcome is None else "(it ended without them)"
    return (f"{s.never_true} values shown as if final were already replaced by another value of this run; "
            f"the rest is judged against the run's own final values {judged}")


def _outcome(s: MetricsSummary) -> str:
    if s.outcome is not None:
        return f"{s.outcome} ({format_seconds(s.elapsed)})"
    return "running…" if s.started else "— not run yet"


def _byte_to_pixel(s: MetricsSummary) -> str:
    if s.byte_to_pixel is None:
        return "—"
    p50, p99, _worst = s.byte_to_pixel
    return f"{format_ms(p50)} / {format_ms(p99)}"


def _fields_right(s: MetricsSummary) -> str:
    f = s.facts
    if not s.started or f.fields_right is None or f.fields_total is None:
        return "—"
    return f"{'✓' if f.fields_right == f.fields_total else '✗'} {f.fields_right} / {f.fields_total}"


def _fields_right_tip(s: MetricsSummary) -> str:
    f = s.facts
    if f.fields_total is not None:
        wrong = f", wrong or missing: {', '.join(f.wrong[:8])}{' …' if len(f.wrong) > 8 else ''}" if f.wrong else ""
        return f"Fields of the expected answer ({f.answer_source}) the committed values have right{wrong}"
    if s.outcome is not None and f.answer_source:
        return f"Not scored: the run did not commit (expected answer: {f.answer_source})"
    if s.outcome is not None:
        return "No expected answer for this document: File → Expected answer… chooses one"
    return "Scored against the expected answer when the run commits"


def _wire(s: MetricsSummary) -> str:
    f = s.facts
    if not s.started:
        return "—"
    counts = [plural(f.deltas, "delta")] if f.deltas or not f.records else []
    if f.records:
        counts.append(plural(f.records, "relay record"))
    return " + ".join(counts) + f" · {plural(f.bytes, 'byte')}"


def _wire_tip(s: MetricsSummary) -> str:
    return ("What the lane read: the provider stream's content deltas (one may carry several tokens), or the "
            "relay's checked records (settled and hybrid lanes), and the bytes on its wire")


def _tokens(s: MetricsSummary) -> str:
    f = s.facts
    if not s.started or (f.tokens_in is None and f.tokens_out is None):
        return "—"
    return f"{'?' if f.tokens_in is None else f'{f.tokens_in:,}'} / {'?' if f.tokens_out is None else f'{f.tokens_out:,}'}"


def _cost_tip(s: MetricsSummary) -> str:
    f = s.facts
    if f.price is None:
        whose = f"for {f.model}" if f.model else "for the lane's model"
        return f"No price {whose}: enter one in File → Settings… (Prices); livefill ships none"
    if f.cost is None:
        return f"{f.model}: the provider did not report both token counts"
    return (f"{f.tokens_in:,} tokens in × {f.price.input:g} + {f.tokens_out:,} out × {f.price.output:g} per million "
            f"({f.model}, your prices)")


#: (key, row title, how the cell is written)
ROWS: tuple[tuple[str, str, Callable[[MetricsSummary], str]], ...] = (
    # the four the demo script points at first: a short table (four rows at 1,280 × 720) shows them
    ("first_value", "First visible value", lambda s: format_seconds(s.first_value)),
    ("byte_to_pixel", "Byte to pixel (p50 / p99)", _byte_to_pixel),
    ("all_settled", "All settled", lambda s: format_seconds(s.all_settled)),
    ("never_true", "Values shown that were never true", _never),
    ("fields_right", "Fields right", _fields_right),
    ("first_settled", "First settled value", lambda s: format_seconds(s.first_settled)),
    ("wire", "On the wire", _wire),
    ("tokens", "Tokens in / out", _tokens),
    ("cost", "Cost (your prices)", lambda s: format_cost(s.facts.cost) if s.started else "—"),
    ("provisional_changed", "Provisional, later changed", lambda s: str(s.provisional_changed) if s.started else "—"),
    ("displays", "Values shown", lambda s: str(s.displays) if s.started else "—"),
    ("outcome", "Run ended", lambda s: _outcome(s)),
)


def _byte_to_pixel_tip(s: MetricsSummary) -> str:
    if s.byte_to_pixel is None:
        return "From the network read that carried a value's settling byte to the paint that shows it settled (a lane that shows no states has none)"
    p50, p99, worst = s.byte_to_pixel
    return (f"{plural(s.painted, 'value')} settled on screen: p50 {format_ms(p50)}, p99 {format_ms(p99)}, worst {format_ms(worst)}"
            + (f"; {s.unpainted} not painted while visible" if s.unpainted else ""))


def _tokens_tip(s: MetricsSummary) -> str:
    if s.facts.tokens_in is None and s.facts.tokens_out is None:
        if s.facts.records:
            return "Tokens in and out: this lane reads the relay's records, which do not carry the provider's counts"
        return "Tokens in (the prompt) and out, as the provider reports them: this one did not (yet)"
    return "Tokens in (the prompt) / out, as the provider reported them"


_TIPS: dict[str, Callable[[MetricsSummary], str]] = {
    "byte_to_pixel": _byte_to_pixel_tip, "never_true": _never_tip, "fields_right": _fields_right_tip,
    "tokens": _tokens_tip, "cost": _cost_tip, "wire": _wire_tip,
}


class MetricsTable(QTableWidget):
    """Figures of every lane side by side (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None, *, refresh_ms: int = 150) -> None:
        super().__init__(len(ROWS), 0, parent)
        self.setObjectName("metricsTable")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setVerticalHeaderLabels([title for _, title, _ in ROWS])
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)  # a long lane title: "…", whole on hover
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._lanes: list[tuple[str, LaneMetrics]] = []
        self._unsubscribes: list[Callable[[], None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self.refresh)

    def set_lanes(self, lanes: Sequence[tuple[str, LaneMetrics]]) -> None:
        """Show these lanes, left to right: (column title, the lane's metrics)."""
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes = [m.subscribe(self._changed) for _, m in lanes]
        self._lanes = list(lanes)
        self.setColumnCount(len(lanes))
        self.setHorizontalHeaderLabels([title for title, _ in lanes])
        for col, (title, _) in enumerate(lanes):
            self.horizontalHeaderItem(col).setToolTip(title)  # (the header elides a title wider than its column)
        self.refresh()
        self.setFixedHeight(self._wanted_height())

    def refresh(self) -> None:
        """Write every cell from the metrics now (a cell is touched only if its text changed), and
        tell the view once: one change of the whole block, not one per cell (each one costs the
        view a layout pass of its headers: ~0.5 ms a cell)."""
        bold = QFont(self.font())
        bold.setBold(True)
        model = self.model()
        changed: list[tuple[int, int]] = []
        blocked = model.blockSignals(True)
        try:
            for col, (_, metrics) in enumerate(self._lanes):
                s = metrics.summary()
                for row, (key, _, fmt) in enumerate(ROWS):
                    item = self.item(row, col)
                    if item is None:
                        item = QTableWidgetItem()
                        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                        self.setItem(row, col, item)
                        changed.append((row, col))
                    text = fmt(s)
                    # a cell too narrow for its text elides; the tooltip has it whole
                    tip = _TIPS[key](s) if key in _TIPS else text
                    font = bold if (key == "never_true" and s.accuses) or (key == "fields_right" and s.facts.wrong) else self.font()
                    if item.text() != text or item.toolTip() != tip or item.font() != font:
                        item.setText(text)
                        item.setToolTip(tip)
                        item.setFont(font)
                        changed.append((row, col))
        finally:
            model.blockSignals(blocked)
        if changed and not blocked:
            rows = [r for r, _ in changed]
            cols = [c for _, c in changed]
            model.dataChanged.emit(model.index(min(rows), min(cols)), model.index(max(rows), max(cols)))

    def cell_text(self, key: str, lane: int) -> str:
        """The text of figure `key` (see ROWS) for the lane in column `lane`."""
        row = [k for k, _, _ in ROWS].index(key)
        item = self.item(row, lane)
        return "" if item is None else item.text()

    def _changed(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _wanted_height(self) -> int:
        self.resizeRowsToContents()
        h = self.horizontalHeader().height() + 2 * self.frameWidth()
        return h + sum(self.rowHeight(r) for r in range(self.rowCount()))
