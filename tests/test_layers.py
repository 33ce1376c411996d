"""The package's shape: layers by the flow of data, no import circles, imports at the top.

Read from the source with `ast` (nothing is imported), so a failure names the file and line.
Layers, lowest first; a module may import its own layer and the ones below, never one above.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

#: The layers, lowest first (docs/architecture.md draws them).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("livefill", "livefill.errors", "livefill.defaults", "livefill.switches", "livefill.observers",
     "livefill.resources", "livefill.loopback", "livefill.wording"),
    ("livefill.wire",),
    ("livefill.extraction",),
    ("livefill.recording",),
    ("livefill.serving",),
    ("livefill.demo",),
    ("livefill.relay",),
    ("livefill.embedded",),
    ("livefill.session",),
    ("livefill.cli",),
    ("livefill.widgets",),
    ("livefill.gui",),
)

#: Where each import name lives in the repository.
ROOTS = {"livefill": REPO / "livefill", "livefill.gui": REPO / "gui", "livefill.widgets": REPO / "widgets"}

#: At most this many imports of livefill's own modules may sit inside functions (kept lazy for
#: start-up time or to keep an optional dependency optional; each one says why beside it).
MAX_LAZY = 30

#: Every import of a livefill module kept inside a function, (importer, imported): why, and the
#: start-up time it saves as measured on 2026-12-01 (2-core machine, load 6-16 while measured, so
#: the figures are high; `python -X importtime` or timing the command, before/after).
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("livefill.cli.extract", "livefill.cli.extract_run"): "`extract --help` and bad options skip the run's modules: 790-1,410 ms",
    ("livefill.cli.extract_run", "livefill.relay.client"): "imported on the prewarm thread beside the server (the SDKs): 8-11 s",
    ("livefill.cli.extract_run", "livefill.wire.providers.transport"): "the same prewarm thread; already loaded by the line above: 0 ms",
    ("livefill.embedded.client", "livefill.wire.providers.transport"): "the request-log client only; transport imports the anthropic SDK: seconds",
    ("livefill.embedded.server", "livefill.embedded.app"): "bind() before the window shows does not build the app: 800-1,350 ms",
    ("livefill.extraction.schemas", "livefill.extraction.user_schema"): "pydantic's model building only once a user schema is read: 430-520 ms",
    ("livefill.serving.runner", "livefill.serving.connection"): "uvicorn and the guarded protocol only when a server starts: 180-260 ms",
    ("livefill.session.run_request", "livefill.relay.client"): "only settled and hybrid runs open a relay (the SDKs): 3-14 s",
    ("livefill.session.run_request", "livefill.relay.request"): "the relay's pydantic models (and relay.records) not before the window shows; the warm-up loads them with relay.client: 110-170 ms",
    ("livefill.session.run_request", "livefill.relay.records"): "loaded with relay.client (the line above it in relay_source): 0 ms",
    ("livefill.wire.providers", "livefill.wire.providers.transport"): "the SDKs and HTTP stack only when a stream opens: ~4,150 ms",
    ("livefill.gui.animate", "livefill.gui.animate_render"): "Qt and the window, not for `animate --help` or a bad trace: 1,150 ms",
    ("livefill.gui.app", "livefill.cli.extract"): "only `livefill extract` needs it: 420 ms",
    ("livefill.gui.app", "livefill.cli.compare"): "only `livefill compare` needs it (as extract, above)",
    ("livefill.cli.compare", "livefill.cli.compare_run"): "`compare --help` and bad options skip the run's modules (as extract's)",
    ("livefill.gui.app", "livefill.gui.app_args"): "`livefill extract` does not pay for the window's options: 55 ms",
    ("livefill.gui.app", "livefill.gui.launch"): "Qt and the window, not for --help or a bad option: 1,100 ms",
    ("livefill.gui.app", "livefill.gui.animate"): "only `livefill animate` needs it: 190 ms",
    ("livefill.gui.cli_args", "livefill.session.compare"): "pydantic and the form model only with --compare: 370 ms",
    ("livefill.gui.cli_args", "livefill.session.scoring"): "the session's scoring only with --expected: 23 ms",
    ("livefill.gui.cli_args", "livefill.session.lane_settings"): "the session's settings only with --compare-preset: 740 ms",
    ("livefill.gui.cli_args", "livefill.session.settings"): "the demo protocol only with --fault / --slice: ~100 ms for `livefill animate` (pydantic no longer: demo/relay_body.py)",
    ("livefill.gui.launch", "livefill.relay.client"): "the SDKs, on the warm-up thread after the window shows: 3,600 ms",
    ("livefill.gui.launch", "livefill.wire.providers.transport"): "loaded with the relay client just above; named for prewarm: 0 ms",
    ("livefill.gui.model_list", "livefill.wire.providers.models"): "the provider SDKs stay off the launch path: ~8,900 ms",
    ("livefill.gui.docks", "livefill.gui.dock_bodies"): "the docks are hidden at launch: their contents (the wire inspector's and the timeline's widgets) are imported and built when a dock is first shown or used, not before the window shows: 35-45 ms (2026-12-02, load 0.7)",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported livefill module
    line: int
    lazy: bool  # inside a function


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            if name.startswith("livefill.gui") and prefix == "livefill" or name.startswith("livefill.widgets") and prefix == "livefill":
                continue
            found[name] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(known: dict[str, Path]) -> list[Import]:
    found: list[Import] = []
    for source, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, lazy: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                names: list[str] = []
                if isinstance(child, ast.Import):
                    names = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                    names = [f"{child.module}.{a.name}" for a in child.names]
                for name in names:
                    target = _resolve(name, known)
                    if target is not None and name.startswith("livefill"):
                        found.append(Import(source, target, child.lineno, inner))
                visit(child, inner)

        visit(tree, False)
    return found


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for index, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    return best


def cycles(edges: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        if edge.source != edge.target and not edge.target == edge.source.rpartition(".")[0]:
            graph.setdefault(edge.source, set()).add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    import sys

    sys.setrecursionlimit(10_000)
    for v in list(graph):
        if v not in index:
            strong(v)
    return found


KNOWN = modules()
EDGES = imports(KNOWN)


def test_every_module_belongs_to_a_layer():
    assert [m for m in KNOWN if layer_of(m) < 0] == []


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{KNOWN[e.source].relative_to(REPO)}:{e.line} {e.source} -> {e.target}"
              for e in EDGES if layer_of(e.target) > layer_of(e.source)]
    assert upward == []


def test_there_are_no_import_circles():
    assert cycles(EDGES) == []


def test_every_lazy_import_is_listed_with_its_reason():
    lazy = {(e.source, e.target) for e in EDGES if e.lazy}
    assert sorted(lazy - set(LAZY_IMPORTS)) == [], "add it to LAZY_IMPORTS with why and the ms it saves"
    assert sorted(set(LAZY_IMPORTS) - lazy) == [], "no longer lazy: remove it from LAZY_IMPORTS"


def test_imports_sit_at_the_top_of_modules():
    lazy = sorted({f"{KNOWN[e.source].relative_to(REPO)}:{e.line}" for e in EDGES if e.lazy})
    assert len(lazy) <= MAX_LAZY, "\n".join(lazy)


def test_the_checks_see_a_circle_and_an_upward_import():
    fake = [Import("livefill.wire.a", "livefill.wire.b", 1, False), Import("livefill.wire.b", "livefill.wire.a", 1, True)]
    assert cycles(fake) == [["livefill.wire.a", "livefill.wire.b"]]
    assert layer_of("livefill.gui.app") > layer_of("livefill.session.run") > layer_of("livefill.wire.sse")
