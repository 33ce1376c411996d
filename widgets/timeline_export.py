"""The timeline exported as a PNG: its picture under a title row (`save_titled`).

Split from widgets/timeline.py (`TimelineView.export_png` renders the picture and hands it here).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPalette

from livefill.widgets.timeline_geometry import _PAD

__all__ = ["save_titled"]


def save_titled(body: QImage, path: str, font: QFont, palette: QPalette, title: str = "", subtitle: str = "") -> QSize:
    """Write `body` to `path` as a PNG under a title row (`title` in bold, `subtitle` below it, in
    `font`'s family, when given); returns the picture's size. OSError if it cannot be written."""
    w = body.width()
    fm = QFontMetrics(font)
    title_font = QFont(font)
    title_font.setBold(True)
    title_font.setPointSizeF(font.pointSizeF() * 1.4)
    tm = QFontMetrics(title_font)
    lines = [(t, f, m) for t, f, m in ((title, title_font, tm), (subtitle, font, fm)) if t]
    head = (_PAD + sum(m.height() + 2 for _t, _f, m in lines) + _PAD // 2) if lines else 0
    img = QImage(w, body.height() + head, QImage.Format.Format_ARGB32)
    img.fill(palette.color(QPalette.ColorRole.Base))
    p = QPainter(img)
    try:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        y = _PAD
        for text, line_font, metrics in lines:
            p.setFont(line_font)
            p.setPen(palette.color(QPalette.ColorRole.Text if line_font is title_font else QPalette.ColorRole.PlaceholderText))
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, w - 2 * _PAD)
            p.drawText(QRectF(_PAD, y, w - 2 * _PAD, metrics.height()), Qt.AlignmentFlag.AlignVCenter, shown)
            y += metrics.height() + 2
        if head:
            rule = QColor(palette.color(QPalette.ColorRole.Text))
            rule.setAlpha(60)
            p.fillRect(QRectF(0, head - 1, w, 1), rule)
        p.drawImage(0, head, body)
    finally:
        p.end()
    if not img.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return img.size()
