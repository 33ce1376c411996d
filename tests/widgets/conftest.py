"""Widgets render a FormModel; these tests drive the model directly (no network, no run)."""

from __future__ import annotations

from pathlib import Path

import pytest

STYLE = Path(__file__).resolve().parents[2] / "assets" / "styles" / "livefill.qss"


@pytest.fixture(autouse=True)
def styled(qapp):
    if not qapp.styleSheet():
        qapp.setStyleSheet(STYLE.read_text(encoding="utf-8"))
    return qapp
