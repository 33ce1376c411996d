"""File → Export timeline as PNG…: a readable picture (at least 1,200 px wide, however narrow or
hidden the dock) under a title row naming the run and its lanes."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from livefill.widgets.timeline import EXPORT_MIN_WIDTH
from tests.gui.conftest import arun, wait_until


def test_the_exported_timeline_is_wide_and_titled_with_the_run_and_its_lanes(make_window, qloop, tmp_path, monkeypatch):
    window = make_window(compare=["naive", "partial", "settled"])
    dock = window.timeline_dock
    assert not dock.isVisible()  # exported from the File menu with the dock never shown

    async def scenario():
        window.start()
        await wait_until(lambda: not window.active, timeout=30)

    arun(qloop, scenario())
    drawn: list[tuple[QRectF, str]] = []
    real = QPainter.drawText

    def recording(self, *args):  # noqa: ANN001, ANN002, ANN202
        if len(args) == 3 and isinstance(args[0], QRectF) and isinstance(args[2], str):
            drawn.append((QRectF(args[0]), args[2]))
        return real(self, *args)

    monkeypatch.setattr(QPainter, "drawText", recording)
    out = dock.export(tmp_path / "timeline.png")
    monkeypatch.setattr(QPainter, "drawText", real)

    image = QImage(str(out))
    view = dock.view
    assert image.width() >= EXPORT_MIN_WIDTH == 1200
    assert image.width() >= view.width()
    title = next((rect, text) for rect, text in drawn if text.startswith("Timeline"))
    rect, text = title
    assert "invoice" in text and "lanes: naive | partial | settled" in text, text
    assert rect.top() < 20  # the first row of the picture
    head = image.height() - view.content_height()
    assert head >= rect.bottom()  # the timeline (its legend, axis and rows) starts below the title row
    assert any(t == dock.note.text() for _r, t in drawn)  # "Seconds from Start; …" under the title
    # the title row is drawn: dark text pixels across its width, on the light base
    base = image.pixelColor(image.width() - 2, 2)
    dark = [x for x in range(0, 600) for y in range(int(rect.top()), int(rect.bottom()))
            if image.pixelColor(x, y).lightness() < base.lightness() - 120]
    assert len(dark) > 200 and max(dark) - min(dark) > 300
    out.rename(tmp_path / "seen.png")
