"""The README and docs/ stay true to the tree: every repository path and livefill name they mention
exists, the README stays a front door (at most 300 lines), CI runs the README's test command, the
provider table is PROVIDER_SPECS and every LIVEFILL_* variable named is a declared switch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").rglob("*.md"))
PAGES = [README, *DOCS]
MAX_README_LINES = 300

#: First folders of a path in the repository (and the old top-level packages, so a stale
#: `core/run.py` or `design/WIRE.md` is caught too).
TOP = ("livefill", "gui", "widgets", "tests", "docs", "assets", "scripts", ".ci", "core", "cli", "design")
#: A path-like word: not part of a longer path, URL or home folder (`~/.local/…`, `site-packages/…`).
PATH = re.compile(r"(?<![\w./~:-])((?:%s)/[\w.*/<>-]*)" % "|".join(re.escape(t) for t in TOP))
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOTTED = re.compile(r"(?<![\w./-])livefill(?:\.\w+)+(?::\w+)?")
FROM_IMPORT = re.compile(r"from (livefill[\w.]*) import (\w+(?:, *\w+)*)")
#: Where each import name's modules live.
ROOTS = {"livefill.gui": REPO / "gui", "livefill.widgets": REPO / "widgets", "livefill.assets": REPO / "assets",
         "livefill": REPO / "livefill"}


def _rel(page: Path) -> str:
    return str(page.relative_to(REPO))


def _exists(path: str) -> bool:
    if "<" in path:  # a placeholder such as LIVEFILL_API_KEY_<HOST> or tests/<area>/
        return True
    if "*" in path:
        return any(REPO.glob(path.rstrip("/")))
    return (REPO / path).exists()


def missing_paths(page: Path) -> list[str]:
    """The repository paths `page` names (in prose, code or links) that do not exist."""
    text = page.read_text(encoding="utf-8")
    missing = []
    for match in PATH.finditer(text):
        path = match.group(1).rstrip(".,;:)")
        if not _exists(path):
            missing.append(path)
    for match in LINK.finditer(text):
        target, _, anchor = match.group(1).partition("#")
        if re.match(r"[a-z]+:", target):
            continue
        linked = (page.parent / target).resolve() if target else page
        if not linked.exists():
            missing.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            missing.append(match.group(1))
    return missing


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives `page`'s headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def _module_path(name: str) -> Path | None:
    """The file (or data folder) of module `name`, or None."""
    for prefix, root in ROOTS.items():  # the more specific roots first
        if name == prefix or name.startswith(prefix + "."):
            rel = name[len(prefix) + 1:].split(".") if name != prefix else []
            base = root.joinpath(*rel)
            for candidate in ([base.with_suffix(".py")] if rel else []) + [base / "__init__.py", base]:
                if candidate.exists():
                    return candidate
            return None
    return None


def _module_source(dotted: str) -> tuple[str, list[str]] | None:
    """The source of the longest module prefix of `dotted`, and the names after it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_path(".".join(parts[:cut]))
        if path is not None:
            return (path.read_text(encoding="utf-8") if path.is_file() else ""), parts[cut:]
    return None


def missing_names(page: Path) -> list[str]:
    """The `livefill.x.y[:name]` names `page` mentions whose module or first attribute is not there."""
    text = page.read_text(encoding="utf-8")
    named = [m.group(0) for m in DOTTED.finditer(text)]
    named += [f"{m.group(1)}.{name.strip()}" for m in FROM_IMPORT.finditer(text) for name in m.group(2).split(",")]
    missing = []
    for dotted in named:
        dotted = dotted.replace(":", ".").rstrip(".")
        found = _module_source(dotted)
        if found is None:
            missing.append(dotted)
            continue
        source, rest = found
        if rest and not re.search(rf"\b{re.escape(rest[0])}\b", source):
            missing.append(dotted)
    return missing


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_repository_path_a_page_names_exists(page: Path):
    assert missing_paths(page) == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_livefill_name_a_page_names_exists(page: Path):
    assert missing_names(page) == []


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move detail to docs/ (at most {MAX_README_LINES})"


def test_ci_runs_exactly_the_readmes_test_command():
    readme = README.read_text(encoding="utf-8")
    command = re.search(r"Run the tests:\s*```\s*\n(.+?)\n```", readme).group(1).strip()
    steps = [step.strip() for step in command.split("&&")]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    positions = [ci.index(step) if step in ci else -1 for step in steps]
    assert -1 not in positions and positions == sorted(positions), (steps, ".ci/run")


def test_the_provider_table_is_provider_specs():
    from livefill.wire.providers.spec import PROVIDER_SPECS

    text = (REPO / "docs" / "providers.md").read_text(encoding="utf-8")
    rows = []
    for line in text[text.index("<!-- providers:"):].splitlines()[1:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])

    def cell(value: str | None) -> str:
        return f"`{value}`" if value else "—"

    expected = [
        [cell(s.name), s.label, cell(s.wire), cell(s.default_model), ", ".join(f"`{x}`" for x in s.structured),
         cell(s.base_url), cell(s.base_url_variable), cell(s.key_variable)]
        for s in PROVIDER_SPECS.values()
    ]
    assert rows[2:] == expected


def test_every_switch_a_page_names_is_declared():
    from livefill.switches import SWITCHES

    history = REPO / "docs" / "figures-history.md"  # names switches as they were then
    named = {
        name
        for page in PAGES
        if page != history
        for name in re.findall(r"LIVEFILL_[A-Z0-9_]*[A-Z0-9](?![\w*<])", page.read_text(encoding="utf-8"))
        if not name.startswith("LIVEFILL_API_KEY")  # one per provider address: livefill/wire/keys.py
    }
    assert sorted(named - set(SWITCHES)) == []


def test_the_checks_see_a_missing_path_and_name(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("See design/WIRE.md, `livefill/nowhere.py`, [x](gone.md), livefill.relay.client.no_such_name, "
                    "livefill.nowhere, `from livefill.wire.sse import Nothing`; but not ~/.local/share/livefill or site-packages/assets/x.json. "
                    "[a](#nowhere); livefill/wire/sse.py and livefill.relay.client.open_relay exist.", encoding="utf-8")
    assert missing_paths(page) == ["design/WIRE.md", "livefill/nowhere.py", "gone.md", "#nowhere"]
    assert missing_names(page) == ["livefill.relay.client.no_such_name", "livefill.nowhere", "livefill.wire.sse.Nothing"]


def test_every_design_note_is_in_the_notes_index():
    notes = REPO / "docs" / "notes"
    index = (notes / "README.md").read_text(encoding="utf-8")
    linked = {target.split("#")[0] for target in LINK.findall(index)}
    assert sorted(p.name for p in notes.glob("*.md") if p.name != "README.md" and p.name not in linked) == []


def test_every_demo_fault_is_named_where_the_fault_menu_is_described():
    from livefill.demo.protocol import FaultName

    text = (REPO / "docs" / "using.md").read_text(encoding="utf-8")
    assert [f.value for f in FaultName if f"`{f.value}`" not in text] == []
