"""A compare-view lane's header: what sets the lane apart, its reading mode, and its live metrics.

`LaneHeader` renders a `livefill.session.metrics.LaneMetrics` (it owns no business state): its
title (what differs from the other lanes, `set_title`: "anthropic · fine-grained"; by default
the mode's name), what its mode means (the naive mode says it is incorrect on purpose), an optional note that a live
provider lane made its own request, and the figures: time to first visible value, time to all
settled, values shown that were never true (with a warning sign when there are any, never colour
alone), provisional values later changed, and how the run ended. It refreshes at most every
`refresh_ms` while the metrics change, and keeps the final figures after the run.

Dynamic properties for QSS: `mode` (the mode name), `neverTrue` (bool: some value shown was
never true), `finished` (bool).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QVBoxLayout, QWidget

from livefill.session.metrics import LaneMetrics, MetricsSummary, format_seconds
from livefill.widgets.elided_label import ElidedLabel

__all__ = ["LaneHeader", "MODE_TITLES", "LIVE_NOTE"]

#: What each reading mode is called in a lane header, and the one-line explanation under it.
MODE_TITLES: dict[str, tuple[str, str]] = {
    "naive": ("naive", "incorrect on purpose: repair-parses the buffer and trusts it"),
    "partial": ("partial", "provisional values marked until they settle"),
    "settled": ("settled", "through the relay: settled, checked values only"),
    "hybrid": ("hybrid", "through the relay: prose grows provisionally, the rest settled"),
    "blocking": ("blocking", "nothing until the whole object has arrived"),
}

#: The note a lane shows when it talks to a live provider (each lane makes its own request).
LIVE_NOTE = "live provider: this lane made its own request"


class LaneHeader(QFrame):
    """Mode + live metrics of one lane (see the module docstring)."""

    def __init__(
        self,
        metrics: LaneMetrics | None = None,
        *,
        mode: str = "partial",
        live: bool = False,
        parent: QWidget | None = None,
        refresh_ms: int = 100,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("laneHeader")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title_label = QLabel(self)
        self.title_label.setObjectName("laneTitle")
        f = QFont(self.title_label.font())
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.15)
        self.title_label.setFont(f)
        self.title_label.setWordWrap(True)  # "anthropic · fine-grained · seed 3" wraps in a narrow lane, never cut
        self.about_label = ElidedLabel(parent=self, max_lines=2)
        self.about_label.setObjectName("laneAbout")
        self.live_label = QLabel(LIVE_NOTE, self)
        self.live_label.setObjectName("laneLive")
        self.live_label.setWordWrap(True)
        # the figures and the outcome (a failure's whole reason) wrap onto two lines at most and
        # elide the rest (whole in the tooltip): a long error never widens the lane or the window
        self.times_label = ElidedLabel(parent=self, max_lines=2)
        self.times_label.setObjectName("laneTimes")
        self.counts_label = QLabel(self)
        self.counts_label.setObjectName("laneCounts")
        self.counts_label.setTextFormat(Qt.TextFormat.RichText)
        self.counts_label.setWordWrap(True)
        self.outcome_label = ElidedLabel(parent=self, max_lines=1)  # the lane's status under it says it whole
        self.outcome_label.setObjectName("laneOutcome")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(2)
        for w in (self.title_label, self.about_label, self.live_label, self.times_label,
                  self.counts_label, self.outcome_label):
            layout.addWidget(w)
        layout.addStretch(1)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.compact = False
        self.title: str | None = None  # what differs from the other lanes (None: the mode's name)
        self.about_shown = True
        self._metrics: LaneMetrics | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self.refresh)
        self.set_mode(mode)
        self.set_live(live)
        self.set_metrics(metrics)

    # -- public API -----------------------------------------------------------------------------

    def set_mode(self, mode: str) -> None:
        """Show `mode` ("naive", "partial", "settled", "hybrid", "blocking")."""
        self.mode = mode
        title, about = MODE_TITLES.get(mode, (mode, ""))
        title = getattr(self, "title", None) or title
        self.title_label.setText(title + (" ⚠" if mode == "naive" else ""))
        self.about_label.setText(about)
        f = QFont(self.about_label.font())
        f.setItalic(mode == "naive")  # the warning is in the words and the sign, not a colour
        self.about_label.setFont(f)
        self.setProperty("mode", mode)
        self._repolish()

    def set_title(self, title: str | None, *, about: bool = True) -> None:
        """Call the lane `title` (what differs from the other lanes: "anthropic · fine-grained";
        None: its mode's name) and show what its mode means only with `about` (the mode is
        shared by every lane: the caption over them says it once). The naive sign stays."""
        self.title = title
        self.about_shown = about
        shown = title if title is not None else MODE_TITLES.get(self.mode, (self.mode, ""))[0]
        self.title_label.setText(shown + (" ⚠" if self.mode == "naive" else ""))
        self.title_label.setToolTip(title or "")
        self.about_label.setVisible(about)

    def set_compact(self, compact: bool) -> None:
        """Compact: only the mode and what it means (one line); the figures are left to the metrics
        table under the lanes (a short screen, or the docks open)."""
        if compact == self.compact:
            return
        self.compact = compact
        self.about_label.max_lines = 1 if compact else 2
        self.about_label.updateGeometry()
        for label in (self.times_label, self.counts_label):
            label.setVisible(not compact)
        self.outcome_label.setVisible(not compact and bool(self.outcome_label.text()))

    def set_live(self, live: bool) -> None:
        """Show (or hide) the live-provider note."""
        self.live = live
        self.live_label.setVisible(live)

    def set_metrics(self, metrics: LaneMetrics | None) -> None:
        """Render `metrics` (None: blank figures)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._metrics = metrics
        if metrics is not None:
            self._unsubscribe = metrics.subscribe(self._changed)
        self.refresh()

    def refresh(self) -> None:
        """Show the metrics' figures now."""
        s = self._metrics.summary() if self._metrics is not None else None
        self.times_label.setText(self.times_text(s))
        self.counts_label.setText(self.counts_html(s))
        self.outcome_label.setText(self.outcome_text(s))
        self.outcome_label.setVisible(bool(self.outcome_label.text()) and not self.compact)
        self.setProperty("neverTrue", bool(s and s.accuses))  # red only once judged by the run's own final values
        self.setProperty("finished", bool(s and s.outcome))
        self._repolish()

    # -- texts (also used by tests) -------------------------------------------------------------

    @staticmethod
    def times_text(s: MetricsSummary | None) -> str:
        """"first value 0.21 s · all settled 1.84 s"."""
        if s is None:
            return "first value — · all settled —"
        return f"first value {format_seconds(s.first_value)} · all settled {format_seconds(s.all_settled)}"

    @staticmethod
    def counts_html(s: MetricsSummary | None) -> str:
        """The never-true and provisional counts (a warning sign marks never-true > 0)."""
        never = 0 if s is None else s.never_true
        prov = 0 if s is None else s.provisional_changed
        known = s is not None and s.final_known  # before: "so far", no sign (it accuses nobody yet)
        mark = ("⚠ " if never else "✓ ") if known else ""
        never_html = f"<b>{mark}{never}</b>" if known and never else f"{mark}{never}"
        tail = "" if s is None or known else " <i>so far</i>"
        return (
            f"values shown that were never true: {never_html}{tail}<br>"
            f"provisional, later changed: {prov}"
        )

    @staticmethod
    def outcome_text(s: MetricsSummary | None) -> str:
        """"stopped after 1.60 s" once the run ended, else ""."""
        if s is None or s.outcome is None:
            return ""
        return f"{s.outcome} after {format_seconds(s.elapsed)}"

    # -- internals ------------------------------------------------------------------------------

    def _changed(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _repolish(self) -> None:
        style = self.style()
        style.unpolish(self)
        style.polish(self)
