"""The status line: phase and reason, bytes and tokens received, stop reason."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from core.run_status import Phase, RunStatus
from widgets.field_base import repolish

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


def status_text(status: RunStatus | None) -> str:
    """The status line's text for `status` (None: no run yet)."""
    if status is None:
        return "○ ready — press Start (Ctrl+Return)"
    mark = PHASE_MARKS[status.phase]
    head = f"{mark} {status.phase.value}"
    if status.reason and status.reason != status.phase.value:
        head += f" — {status.reason}"
    parts = [head, human_bytes(status.bytes_received), f"{status.tokens_received} tokens"]
    if status.stop_reason:
        parts.append(f"stop reason: {status.stop_reason}")
    parts.append(f"{status.elapsed:.1f} s")
    return "  ·  ".join(parts)


class StatusLine(QLabel):
    """One line of run status; its `phase` property drives the QSS colouring (text says it too)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusLine")
        self.show_status(None)

    def show_status(self, status: RunStatus | None) -> None:
        """Show `status`."""
        self.setText(status_text(status))
        phase = status.phase.value if status is not None else "ready"
        if self.property("phase") != phase:
            self.setProperty("phase", phase)
            repolish(self)
