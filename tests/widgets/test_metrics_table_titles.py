"""widgets/metrics_table.py: a lane title wider than its column ends in "…" in the header, and
the whole title is the header's tooltip (before, the centred title was cut at both ends)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from livefill.session.metrics import LaneMetrics
from livefill.widgets.metrics_table import MetricsTable

TITLES = ["anthropic · fine-grained · hybrid · seed 3", "openai-chat · live · smollm2 · json_object", "ollama",
          "anthropic · naive · seed 9", "openai-responses · settled · seed 3"]


def test_long_lane_titles_elide_with_the_whole_title_on_hover(qtbot):
    table = MetricsTable(refresh_ms=5)
    qtbot.addWidget(table)
    table.set_lanes([(title, LaneMetrics()) for title in TITLES])
    table.resize(900, 400)
    table.show()
    qtbot.waitExposed(table)
    header = table.horizontalHeader()
    assert header.textElideMode() == Qt.TextElideMode.ElideRight
    width = header.sectionSize(0)
    assert header.fontMetrics().horizontalAdvance(TITLES[0]) > width  # the first title does not fit its column
    assert [table.horizontalHeaderItem(i).toolTip() for i in range(len(TITLES))] == TITLES
    # hovering the header shows the whole title (QHeaderView asks the item for its tooltip)
    pos = QPoint(header.sectionViewportPosition(0) + width // 2, header.height() // 2)
    QApplication.sendEvent(header.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, header.viewport().mapToGlobal(pos)))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == TITLES[0], timeout=2000)
