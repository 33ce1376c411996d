"""Shared test setup: Qt runs headless, paths to the repository and the shared corpus, the
session's demo server, and an event loop with a virtual clock.

Time in tests
-------------
A test asserts order and causality, never a wall-clock margin. Code whose only clock is the event
loop's (`loop.time()`: asyncio.sleep, asyncio.timeout, call_later, the idle watchdog) runs on
`virtual_loop`, where time jumps straight to the next timer whenever nothing is ready: a 20 s idle
limit costs no real time and fires at exactly 20 s. Tests against real servers in other threads
wait on a condition with a generous limit (`wait_until`) instead of sleeping a fixed time, and find
their own request-log entry by its `x-demo-tag`. Tests that take real seconds (subprocesses,
real-time streams, stress, long property runs) carry `@pytest.mark.slow`, and so does every case
of a streaming scenario matrix run on the 20 KB `catalog` scenario (marked here, at collection);
`pytest -m "not slow"` is the fast loop, the plain `pytest` (CI) runs everything.
"""

import asyncio
import gc
import importlib
import json
import os
import selectors
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Compiled modules, and pytest's assertion-rewritten test modules, are cached outside the checkout
# (never a __pycache__ in it), even where PYTHONDONTWRITEBYTECODE is set, as on this project's
# machines: without a cache every xdist worker of every run compiles and rewrites ~250 modules again
# (collection of the fast loop measured 26 s without, 11 s with). Set before any test module loads.
sys.pycache_prefix = str(Path(tempfile.gettempdir()) / "livefill-test-pycache")
sys.dont_write_bytecode = False

# Tests never touch the user's own data or config (history, recordings, QSettings): every process
# of the run, subprocesses included, gets private XDG folders.
_PRIVATE_XDG = Path(tempfile.mkdtemp(prefix="livefill-tests-"))
os.environ["XDG_DATA_HOME"] = str(_PRIVATE_XDG / "data")
os.environ["XDG_CONFIG_HOME"] = str(_PRIVATE_XDG / "config")
# Nothing of a run is written into the checkout: Hypothesis keeps its example database and caches
# there too, not in ./.hypothesis (read when first used, after this; a failing example is printed).
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(_PRIVATE_XDG / "hypothesis"))
# Run workers start at the tests' own priority, not 10 below (livefill.session.run_worker.niceness):
# three xdist processes keep both cores busy, and a worker started below them waited for a core
# (a cold one's imports took 15-20 s: a slow test, and a Stop test that once saw no content in 20 s).
# tests/session/test_run_worker.py checks the priority itself with the switch unset and set.
os.environ.setdefault("LIVEFILL_WORKER_NICENESS", "0")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


import pytest  # noqa: E402

#: Workers of the plain `python -m pytest` (pytest-xdist) on the project's 2-core machines: one
#: more than the cores, since many tests wait on sockets, subprocesses and real-time streams (the
#: fast loop measured at load ~2-3: 208 s with 2 workers, 162 s with 3, 176 s with 4).
DEFAULT_WORKERS = 3


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The plain `python -m pytest` runs on DEFAULT_WORKERS xdist workers (`--dist loadgroup`:
    tests marked `xdist_group` share one worker). Anything the command line says wins: `-n N`,
    `-n 0` or `-p no:xdist` (one process), `--dist ...`, `--pdb`, `--collect-only`; so does a run of
    named tests (`path::test`), where starting workers would cost more than it saves.

    Runs before xdist's own hook (both tryfirst; a conftest registers later, so it is called first).
    """
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    option = config.option
    if option.numprocesses is not None or option.dist != "no" or getattr(option, "tx", None):
        return
    if option.usepdb or option.collectonly or any("::" in str(arg) for arg in config.args):
        return
    option.numprocesses = DEFAULT_WORKERS
    option.dist = "loadgroup"


@pytest.fixture(autouse=True)
def _runs_read_in_this_process_again():
    """A test that goes through the app's launch (livefill.gui.launch.start_warmup) makes worker
    reads its process's default, as the app does: the next test of this xdist worker starts
    without it again (LIVEFILL_RUN_WORKER still wins either way)."""
    yield
    remote = sys.modules.get("livefill.session.run_remote")  # (not imported for a test that has not)
    if remote is not None:
        remote.use_by_default(False)


#: The 20 KB scenario is the stress case of the scenario matrices that stream or re-cut every
#: scenario: there its cases run in the full suite only, and the fast loop keeps the four small
#: scenarios on every wire. (Cheap checks of the catalog elsewhere stay in the fast loop.)
STRESS_SCENARIO = "catalog"
STREAMING_MATRICES = {
    "test_providers_live.py",
    "test_relay_server.py",
    "test_relay_settler.py",
    "test_run_demo.py",
    "test_server_sdks.py",
}


#: Tests measured at a quarter second or more in the fast loop (scripts/slow_tests.py writes it):
#: marked slow here, so `-m "not slow"` stays under a minute; the full suite runs them all.
SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def _measured_slow() -> frozenset[str]:
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines() if SLOW_LIST.exists() else []
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the `xdist_group` marks
def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    one_model_server = pytest.mark.xdist_group("realserver")
    _keep_only_timed_tests(config, items)
    measured = frozenset() if config.getoption("--ignore-slow-list") else _measured_slow()
    for item in items:
        if item.nodeid in measured:
            item.add_marker(slow)
        if item.get_closest_marker("realserver") is not None:
            item.add_marker(one_model_server)  # one worker starts the llama server, not each
        callspec = getattr(item, "callspec", None)
        if callspec is None or item.path.name not in STREAMING_MATRICES:
            continue
        if any(v == STRESS_SCENARIO for v in callspec.params.values() if isinstance(v, str)):
            item.add_marker(slow)


def pytest_collection_finish(session):
    """Freeze what collection left alive (every imported module, the test items) out of the cyclic
    collector: it stays alive anyway, and the tests that call gc.collect() then pay only for the
    objects made since, not ~0.3 s for the whole process each time."""
    gc.collect()
    gc.freeze()


class _JumpingSelector(selectors.DefaultSelector):
    """Polls without blocking; when nothing is ready, moves the loop's clock to the next timer."""

    def __init__(self, loop: "VirtualTimeLoop") -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None):  # type: ignore[override]
        events = super().select(0)
        if events or timeout == 0:
            return events
        if timeout is None:  # no timer at all: only another thread can wake the loop
            return super().select(None)
        self._loop.advance(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio loop whose `time()` is virtual (starts at 0) and jumps when the loop is idle.

    Sockets and call_soon_threadsafe still work (they are polled first), but a loop waiting on
    real I/O would see its timers fire at once: use it for code whose waits are all timers.
    """

    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(selector=_JumpingSelector(self))

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)


@pytest.fixture
def virtual_loop():
    """A VirtualTimeLoop, current for the test; drive it with `virtual_loop.run_until_complete`."""
    loop = VirtualTimeLoop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture(scope="session")
def demo_server():
    """A started EmbeddedServer (demo provider + relay) shared by the whole session.

    Its knob defaults are speed 0 (as fast as possible) and no time to first token, so tests are
    fast; a test that needs timing sends `x-demo-speed` / `x-demo-ttft` itself. Use `.url`,
    `.relay_token` and `.requests()` (the request log).
    """
    from livefill.demo.knobs import DemoDefaults
    from livefill.embedded.server import EmbeddedServer

    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def _one_ca_bundle():
    """Every httpx client (the tests' own, the SDKs') loads the CA bundle into a new SSL context,
    ~50 ms of CPU each, and the suite makes hundreds of loopback clients that never use it. Share
    one default context for the session, as the app itself does (livefill/wire/providers/transport.py)."""

    shared: dict[str, object] = {}
    with pytest.MonkeyPatch.context() as patch:
        for name in ("httpx", "httpx2"):
            try:
                module = importlib.import_module(f"{name}._transports.default")
            except ImportError:
                continue
            create = getattr(module, "create_ssl_context", None)
            if create is None:
                continue

            def cached(verify=True, cert=None, trust_env=True, *, _create=create, _name=name):
                if verify is not True or cert is not None:
                    return _create(verify=verify, cert=cert, trust_env=trust_env)
                if _name not in shared:
                    shared[_name] = _create(verify=verify, cert=cert, trust_env=trust_env)
                return shared[_name]

            patch.setattr(module, "create_ssl_context", cached)
        yield


def _qt_app_exists() -> bool:
    widgets = sys.modules.get("PySide6.QtWidgets")
    return widgets is not None and widgets.QApplication.instance() is not None


@pytest.fixture(autouse=True)
def _qt_garbage_on_the_gui_thread(request):
    """Qt tests: no automatic garbage collection in other threads (see gui/gui_thread_gc.py).

    A cycle holding a Qt object left by one test could otherwise be collected by the demo
    server's thread, or inside a later test's event processing, and crash Qt. So once a
    QApplication exists in the process, every later test runs this way too, Qt or not (under
    `-n 2` a worker runs server tests after Qt tests, and one crashed there without it).

    What is still alive once the garbage is gone (modules, the session's fixtures) is frozen out
    of later collections, so the collections around each test scan only what the test made: a
    full collection of the whole test process costs ~0.3 s, and there are several per test.
    """
    if not {"qapp", "qtbot", "qloop"} & set(request.fixturenames) and not _qt_app_exists():
        yield
        return
    from livefill.gui.gui_thread_gc import collect_between

    gc.collect()
    gc.freeze()
    with collect_between():
        yield


# --- no trace written by any test holds a credential ----------------------------------------------

_CREDENTIAL_WORDS = ("authorization", "x-api-key", "bearer ")


def traces_holding_credentials(root: Path) -> list[str]:
    """Every livefill trace under `root` that names a credential header or a bearer token, in its
    header, trailer or any read's decoded bytes: "path: word"."""
    import base64
    import json

    found: list[str] = []
    for path in root.rglob("*.jsonl"):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        if not lines or '"trace": "livefill"' not in lines[0] and '"trace":"livefill"' not in lines[0]:
            continue
        texts = []
        for line in lines:
            texts.append(line)
            try:
                obj = json.loads(line)
                if isinstance(obj, dict) and isinstance(obj.get("b64"), str):
                    texts.append(base64.b64decode(obj["b64"]).decode("utf-8", "replace"))
            except ValueError:
                continue
        for word in _CREDENTIAL_WORDS:
            if any(word in text.lower() for text in texts):
                found.append(f"{path}: {word.strip()}")
    return found


@pytest.fixture(autouse=True)
def _traces_never_hold_credentials(request):
    """After each test that used a tmp_path: no trace it wrote names a credential."""
    root = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if root is not None:
        found = traces_holding_credentials(root)
        assert not found, f"traces holding credentials: {found}"


def pytest_sessionfinish(session, exitstatus):
    """The recordings folder (the private XDG data folder of this run) is checked the same way.
    An xdist worker hands the fault matrix cells it ran to the controller."""
    found = traces_holding_credentials(_PRIVATE_XDG)
    if found:
        session.config.get_terminal_writer().line(f"traces holding credentials: {found}", red=True)
        session.exitstatus = 1
    workeroutput = getattr(session.config, "workeroutput", None)
    cells = _fault_matrix_results()
    if workeroutput is not None and cells:
        workeroutput[_FAULT_MATRIX] = json.dumps([[*cell, row] for cell, row in cells.items()])


# --- wall-clock figures: reported, never asserted ------------------------------------------------
# A test asserts what happened (which error, which limit fired, that a server stopped early), never
# how many seconds it took: a loaded machine is slower, not wrong. Where the time itself is worth
# watching, the test reports it with the `timing` fixture, and tests/benchmarks/bench_timings.py
# runs those tests (`--timings-out FILE`) and prints each figure beside its budget.


def pytest_addoption(parser):
    parser.addoption(
        "--ignore-slow-list", action="store_true",
        help="do not mark the tests of tests/slow_tests.txt slow (scripts/slow_tests.py measures with it)",
    )
    parser.addoption(
        "--timings-out", metavar="FILE", default=None,
        help="run only the tests that report wall-clock figures (the `timing` fixture) and append "
        "each figure to FILE as a JSON line (tests/benchmarks/bench_timings.py)",
    )  # fmt: skip


class Timing:
    """The wall-clock figures one test reports: `record(what, seconds, budget)`."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.figures: list[dict[str, object]] = []

    def record(self, what: str, seconds: float, budget: float) -> None:
        """`seconds` measured for `what`; `budget`: what it should stay within on an idle machine
        (printed by the bench, not asserted)."""
        self.figures.append({"test": self.test, "what": what, "seconds": seconds, "budget": budget})


@pytest.fixture
def timing(request):
    timing = Timing(request.node.nodeid)
    yield timing
    out = request.config.getoption("timings_out")
    if out and timing.figures:
        with open(out, "a", encoding="utf-8") as file:
            file.write("".join(json.dumps(figure) + "\n" for figure in timing.figures))


def _keep_only_timed_tests(config, items) -> None:
    if not config.getoption("timings_out"):
        return
    timed = [item for item in items if "timing" in getattr(item, "fixturenames", ())]
    config.hook.pytest_deselected(items=[item for item in items if "timing" not in getattr(item, "fixturenames", ())])
    items[:] = timed


# --- the fault matrix's report: printed, and written to the run's temporary folder -----------------

_FAULT_MATRIX = "tests.reliability.matrix"


def _fault_matrix_results() -> dict | None:
    """The cells run so far (tests/reliability/matrix.py RESULTS), or None when no cell ran here."""
    matrix = sys.modules.get(_FAULT_MATRIX)
    return matrix.RESULTS if matrix is not None else None


@pytest.hookimpl(optionalhook=True)  # an xdist hook: absent with -p no:xdist
def pytest_testnodedown(node, error):
    cells = getattr(node, "workeroutput", {}).get(_FAULT_MATRIX)
    if cells:
        matrix = importlib.import_module(_FAULT_MATRIX)  # the controller itself ran no cell
        for fault, wire, mode, row in json.loads(cells):
            matrix.RESULTS[(fault, wire, mode)] = row


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The fault matrix's table when cells ran; the report goes to `<basetemp>/fault_matrix.md`,
    never into the checkout (the committed one is written by scripts/fault_matrix.py)."""
    cells = _fault_matrix_results()
    if not cells or hasattr(config, "workerinput"):
        return
    matrix = sys.modules[_FAULT_MATRIX]
    path = config._tmp_path_factory.getbasetemp() / "fault_matrix.md"
    path.write_text(matrix.report(cells), encoding="utf-8")
    terminalreporter.write_sep("=", "fault matrix: demo fault x wire x mode")
    terminalreporter.write_line(matrix.render(cells))
    terminalreporter.write_line(f"(written to {path}; the committed report: python scripts/fault_matrix.py)")
