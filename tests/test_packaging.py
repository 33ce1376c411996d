"""The wheel's package list (pyproject.toml [tool.setuptools] packages) is the tree's: a new
subpackage cannot be left out of the wheel. The repository keeps gui/, widgets/ and assets/ at its
top level, mapped by package-dir to livefill.gui, livefill.widgets and livefill.assets.

Building and installing the wheel itself is scripts/wheel_smoke.sh (run by .ci/run).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
#: Each folder of the repository that is a package of the wheel, by the package name of its root.
ROOTS = {"livefill": REPO / "livefill", **{name: REPO / folder for name, folder in SETUPTOOLS["package-dir"].items()}}


def python_folders(root: Path) -> list[Path]:
    """`root` and every folder below it holding a Python module (caches and hidden folders aside)."""
    folders = {root} | {p.parent for p in root.rglob("*.py")}
    return sorted(f for f in folders if not any(part.startswith((".", "__pycache__")) for part in f.relative_to(root).parts))


def package_name(root_name: str, root: Path, folder: Path) -> str:
    return ".".join([root_name, *folder.relative_to(root).parts])


def tree_packages() -> set[str]:
    names = set()
    for root_name, root in ROOTS.items():
        for folder in python_folders(root):
            if (folder / "__init__.py").is_file():
                names.add(package_name(root_name, root, folder))
    return names


def test_the_package_dirs_map_the_top_level_folders_into_livefill():
    assert SETUPTOOLS["package-dir"] == {"livefill.gui": "gui", "livefill.widgets": "widgets", "livefill.assets": "assets"}


def test_the_package_list_is_every_package_of_the_tree():
    listed = set(SETUPTOOLS["packages"])
    tree = tree_packages()
    assert not tree - listed, f"packages missing from pyproject.toml [tool.setuptools] packages: {sorted(tree - listed)}"
    assert not listed - tree, f"packages listed in pyproject.toml that are not in the tree: {sorted(listed - tree)}"
    assert len(SETUPTOOLS["packages"]) == len(listed), "a package is listed twice"


def test_every_folder_of_python_modules_is_a_package():
    """A folder of modules without __init__.py is a namespace package, which the list above would
    not name and the wheel would leave out."""
    missing = [
        str(folder.relative_to(REPO))
        for root in ROOTS.values()
        for folder in python_folders(root)
        if not (folder / "__init__.py").is_file()
    ]
    assert not missing, f"folders of Python modules without an __init__.py: {missing}"
