"""Where livefill's bundled files live."""

from __future__ import annotations

from pathlib import Path

#: The repository's (or installed tree's) `assets/` folder: scenarios, QSS styles, icons.
ASSETS: Path = Path(__file__).resolve().parent.parent / "assets"

#: The bundled demo scenarios, one folder per scenario.
SCENARIOS_DIR: Path = ASSETS / "scenarios"
