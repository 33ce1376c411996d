"""Where livefill's bundled files live: the `livefill.assets` package data, found by importlib.

Read from the installed package (a wheel's site-packages, or the checkout in an editable
install), never relative to the working directory. livefill is installed as files, not zipped,
so the folder is a real path.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

#: The bundled files: scenarios (with their recordings) and QSS styles.
ASSETS: Path = Path(str(files("livefill.assets")))

#: The bundled demo scenarios, one folder per scenario.
SCENARIOS_DIR: Path = ASSETS / "scenarios"

#: The QSS style sheets (light and dark).
STYLES_DIR: Path = ASSETS / "styles"
