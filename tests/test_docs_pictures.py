"""Every picture of the window that README.md and docs/ show is made by scripts/docs_pictures.py,
from the app itself, so none can drift from the app unnoticed (run the script to refresh them)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("docs_pictures", REPO / "scripts" / "docs_pictures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("docs_pictures", module)  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def shown_pictures() -> set[str]:
    """The window's pictures (docs/screenshots, docs/animations) the README and docs reference."""
    found = set()
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            if path.is_relative_to(REPO / "docs" / "screenshots") or path.is_relative_to(REPO / "docs" / "animations"):
                found.add(path.relative_to(REPO).as_posix())
    return found


def test_every_picture_of_the_window_in_the_docs_is_made_by_the_pictures_script():
    made = {out for picture in _script().PICTURES for out in picture.outputs}
    shown = shown_pictures()
    assert shown, "no picture found in the docs: the search is broken"
    assert shown <= made, f"pictures no script makes (add them to scripts/docs_pictures.py): {sorted(shown - made)}"
    assert all((REPO / p).is_file() for p in made), [p for p in made if not (REPO / p).is_file()]


def test_the_pictures_script_lists_the_readme_command_for_the_hero_animation():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    hero = next(p for p in _script().PICTURES if p.outputs == ("docs/animations/compare-invoice.gif",))
    quoted = "livefill " + " ".join(a.replace("OUT", hero.outputs[0]) for a in hero.argv)
    assert quoted in readme, f"the README's command for the hero GIF is not the script's: {quoted}"
