"""Draws a table cell's state the way the field widgets show theirs (outline + a marker glyph)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from widgets.table_model import STATE_ROLE

AMBER = QColor("#d08a00")
RED = QColor("#c62828")
GREEN = QColor("#2e7d32")
MUTED = QColor("#8a8a8a")

GLYPH_SPACE = 14

GLYPHS = {"provisional": "…", "settled": "✓", "invalid": "✗", "pending": "◌"}


class StateDelegate(QStyledItemDelegate):
    """provisional: dashed amber outline + "…"; settled: a check; invalid: red outline + "✗";
    pending: a placeholder. The glyph makes the state readable without colour."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        state = index.data(STATE_ROLE)
        text_option = QStyleOptionViewItem(option)
        text_option.rect = option.rect.adjusted(0, 0, -GLYPH_SPACE, 0)  # keep the glyph's corner free
        super().paint(painter, text_option, index)
        if state in (None, "empty"):
            return
        painter.save()
        rect: QRect = option.rect.adjusted(1, 1, -2, -2)
        if state == "provisional":
            pen = QPen(AMBER, 1.5, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawRect(rect)
        elif state == "invalid":
            painter.setPen(QPen(RED, 2))
            painter.drawRect(rect)
        elif state == "pending" and not index.data(Qt.ItemDataRole.DisplayRole):
            painter.setPen(MUTED)
            painter.drawText(rect.adjusted(4, 0, 0, 0), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), "waiting…")
        glyph = GLYPHS.get(state)
        if glyph and state != "provisional":
            colour = {"settled": GREEN, "invalid": RED}.get(state, MUTED)
            painter.setPen(colour)
            font = painter.font()
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
            painter.setFont(font)
            painter.drawText(rect.adjusted(0, 0, -2, 0), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight), glyph)
        painter.restore()
