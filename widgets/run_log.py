"""The run log: one line per attempt and how it ended."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from livefill.session.run_status import RunStatus
from livefill.widgets.status_line import COUNTS_HELP, PHASE_MARKS, counts_text, human_bytes, phase_words


def log_line(number: int, status: RunStatus, label: str) -> str:
    """'#3 14:02:11 invoice · anthropic · partial → stopped: …'."""
    when = time.strftime("%H:%M:%S", time.localtime(status.started_at or time.time()))
    text = f"#{number} {when}  {label} · {status.mode.value} → {PHASE_MARKS[status.phase]} {phase_words(status, ': ')}"
    text += f"  ({counts_text(status)}, {human_bytes(status.bytes_received)}, {status.elapsed:.1f} s)"
    return text


class RunLog(QListWidget):
    """Lists every attempt, newest last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runLog")
        self._count = 0

    def add_run(self, status: RunStatus, label: str) -> QListWidgetItem:
        """Append a finished (or failed-to-start) run."""
        self._count += 1
        item = QListWidgetItem(log_line(self._count, status, label))
        item.setData(0x0100, status.phase.value)
        item.setToolTip(f"{status.reason}\n\n{COUNTS_HELP}" if status.reason else COUNTS_HELP)
        self.addItem(item)
        self.scrollToBottom()
        return item

    def lines(self) -> list[str]:
        """The text of every entry (oldest first)."""
        return [self.item(i).text() for i in range(self.count())]
