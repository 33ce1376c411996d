"""The status line: phase and reason, bytes, deltas or records received, stop reason, elapsed time.

Three counts are never called by one name: the provider stream's content *deltas* (one delta may
carry several model tokens: Anthropic sends 41 for 213 tokens), the relay's checked *records*,
and the model's *tokens* as the server counts them (only the demo provider's note says those).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QWidget

from livefill.session.run_status import Phase, RunStatus
from livefill.widgets.elided_label import ElidedLabel
from livefill.widgets.field_base import repolish

PHASE_MARKS = {
    Phase.READY: "○",
    Phase.CONNECTING: "⇄",
    Phase.STREAMING: "▶",
    Phase.COMMITTED: "✓",
    Phase.STOPPED: "■",
    Phase.FAILED: "✗",
}


def human_bytes(n: int) -> str:
    """1234 -> '1.2 KB'."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"


COUNTS_HELP = (
    "deltas: content events of the provider's stream (one may carry several model tokens); "
    "records: checked records from the relay; tokens: the model's tokens, as the server counts them"
)
"""What each count on the status line is (its tooltip)."""


def counts_text(status: RunStatus) -> str:
    """'14 deltas', '13 records' (relay modes), or both when both arrived."""
    parts = []
    if status.records_received or status.mode.spec.needs_relay:
        parts.append(plural(status.records_received, "record"))
    if status.deltas_received or not parts:
        parts.insert(0, plural(status.deltas_received, "delta"))
    return ", ".join(parts)


def plural(n: int, noun: str) -> str:
    """1 -> '1 delta', 14 -> '14 deltas'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def phase_words(status: RunStatus, sep: str) -> str:
    """The phase and why: "failed — idle timeout: …"; a reason that begins with the phase's word
    stands alone ("stopped by the user", not "stopped — stopped by the user")."""
    phase, reason = status.phase.value, status.reason
    if not reason or reason == phase:
        return phase
    if reason.startswith(phase + " "):
        return reason
    return f"{phase}{sep}{reason}"


STARTING_TEXT = f"{PHASE_MARKS[Phase.CONNECTING]} starting…"
"""The line of a Start taken while the app still loads its providers: the run begins once they are up."""


def status_text(status: RunStatus | None) -> str:
    """The status line's text for `status` (None: no run yet)."""
    if status is None:
        return "○ ready — press Start (Ctrl+Return)"
    head = f"{PHASE_MARKS[status.phase]} {phase_words(status, ' — ')}"
    parts = [head, human_bytes(status.bytes_received), counts_text(status)]
    if status.stop_reason:
        parts.append(f"stop reason: {status.stop_reason}")
    parts.append(f"{status.elapsed:.1f} s")
    return "  ·  ".join(parts)


def compare_text(lanes: list[tuple[str, RunStatus | None]], seed: int | None = None) -> tuple[str, str]:
    """The status line of the compare view: every lane's phase in one line, and the phase it shows."""
    parts = []
    phases = []
    for title, s in lanes:
        if s is None:
            parts.append(f"{title}: ready")
            continue
        phases.append(s.phase)
        parts.append(f"{title}: {PHASE_MARKS[s.phase]} {s.phase.value} ({counts_text(s)})")
    if any(p.active for p in phases):
        phase = "streaming"
    elif phases and all(p is Phase.COMMITTED for p in phases):
        phase = "committed"
    elif any(p is Phase.FAILED for p in phases):
        phase = "failed"
    elif any(p is Phase.STOPPED for p in phases):
        phase = "stopped"
    else:
        phase = "ready"
    tail = f"  ·  seed {seed}" if seed is not None and phases else ""
    return f"compare · {len(lanes)} lanes  ·  " + "  ·  ".join(parts) + tail, phase


class StatusLine(ElidedLabel):
    """One line of run status; its `phase` property drives the QSS colouring (text says it too).

    A long line (a provider's error message) is elided, whole in the tooltip: it never widens the
    window. It changes text up to once a frame while a run streams; being an ElidedLabel, that
    repaints the line alone and asks no layout again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, max_lines=1)
        self.setObjectName("statusLine")
        self.setToolTip(COUNTS_HELP)
        self.show_status(None)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange):
            self._mark_opaque()
        return handled

    def _mark_opaque(self) -> None:
        # Both style sheets give the line a background of its own, so what is behind it need not
        # be painted first (else the window, its splitter and panel repaint with every update).
        # Set after each polish: polishing under a style sheet clears it.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)

    def show_status(self, status: RunStatus | None) -> None:
        """Show `status`."""
        self._show(status_text(status), status.phase.value if status is not None else "ready")

    def show_compare(self, lanes: list[tuple[str, RunStatus | None]], seed: int | None = None) -> None:
        """Show every compare lane's phase (title, latest status) in one line."""
        self._show(*compare_text(lanes, seed))

    def show_starting(self) -> None:
        """A Start was taken and its run has not begun yet (the app still loads its providers)."""
        self._show(STARTING_TEXT, Phase.CONNECTING.value)

    def _show(self, text: str, phase: str) -> None:
        self.setText(text)
        if self.property("phase") != phase:
            self.setProperty("phase", phase)
            repolish(self)
            self._mark_opaque()
