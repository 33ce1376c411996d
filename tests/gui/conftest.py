"""qasync + pytest-qt: how the GUI tests drive the window while asyncio runs on Qt's loop.

The pattern: pytest-qt's `qapp` is the QApplication; the `qloop` fixture makes a qasync
`QEventLoop` on it and sets it as the current loop; a test is a plain function that calls
`qloop.run_until_complete(scenario())`, where `scenario` is a coroutine that clicks and then
`await wait_until(...)`. Awaiting (not `qtbot.waitUntil`, which spins a nested Qt loop) keeps
both Qt events and asyncio callbacks flowing on the one loop, exactly as in the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import qasync

from livefill.recording.history import History
from livefill.gui.loop import asyncgen_hooks

STYLE = Path(__file__).resolve().parents[2] / "assets" / "styles" / "livefill.qss"


class TestLoop(qasync.QEventLoop):
    """qasync's loop, whose `run_until_complete` runs its last pass over Qt's events as the
    running loop.

    qasync's own processes the pending events once more after `run_forever` has returned, with no
    running loop set: a task step run there (a run still streaming when one `arun` ends and the
    test awaits it in the next) finds none, and httpcore/anyio's `current_task()` failed the run
    with "internal error: RuntimeError: no running event loop" (seen under load in CI). The app
    runs one `run_until_complete` for its whole life, so this only concerns tests that run the
    loop in pieces."""

    _completing = False

    def run_forever(self):  # noqa: ANN201 (qasync's)
        try:
            return super().run_forever()
        finally:
            if self._completing:
                asyncio.events._set_running_loop(self)  # for run_until_complete's last pass

    def run_until_complete(self, future):  # noqa: ANN001, ANN201 (qasync's)
        self._completing = True
        try:
            return super().run_until_complete(future)
        finally:
            self._completing = False
            asyncio.events._set_running_loop(None)


@pytest.fixture
def qloop(qapp):
    """A qasync event loop on pytest-qt's QApplication, current for the test."""
    if not qapp.styleSheet():
        qapp.setStyleSheet(STYLE.read_text(encoding="utf-8"))
    loop = TestLoop(qapp)
    asyncio.set_event_loop(loop)
    with asyncgen_hooks(loop):  # as livefill.gui.app does: qasync on 3.11 installs none
        yield loop
        loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    asyncio.set_event_loop(None)


def arun(loop, coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
    """Run `coro` on `loop` to completion (bounded by `timeout`)."""
    return loop.run_until_complete(asyncio.wait_for(coro, timeout))


async def wait_until(predicate: Callable[[], bool], timeout: float = 15.0, interval: float = 0.005) -> None:
    """Await until `predicate()` is true (AssertionError after `timeout` s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {getattr(predicate, '__name__', predicate)}")
        await asyncio.sleep(interval)


_WINDOW_OPTIONS = ("store", "remembered", "theme", "document", "compare")
_SESSION_OPTIONS = ("history", "recorder_max_bytes", "keys")
_LIVE_OPTIONS = ("live", "live_base_url", "model", "structured", "schema_name")


def window_on(demo_server, history: History | None, **kwargs: Any):
    """A MainWindow on `demo_server`, made as a launch makes it: `kwargs` are the window's own
    options, the session's (`keys`, `recorder_max_bytes`), the live options a command line gives
    (`live`, `live_base_url`, `model`, `structured`, `schema_name`) and any other RunSettings field."""
    from livefill.gui.launch_session import first_settings
    from livefill.gui.main_window import MainWindow
    from livefill.session.session import Session
    from livefill.session.settings import RunSettings

    window_options = {k: kwargs.pop(k) for k in _WINDOW_OPTIONS if k in kwargs}
    session_options = {k: kwargs.pop(k) for k in _SESSION_OPTIONS if k in kwargs}
    live_options = {k: kwargs.pop(k) for k in _LIVE_OPTIONS if k in kwargs}
    session_options.setdefault("history", history)
    settings = RunSettings(base_url=demo_server.url, relay_token=demo_server.relay_token, **kwargs)
    settings = first_settings(settings, window_options.get("remembered"), **live_options)
    return MainWindow(Session(settings, **session_options), **window_options)


@pytest.fixture
def make_window(qapp, qloop, demo_server, tmp_path):
    """A factory for a MainWindow on the session's demo server (history in tmp_path); see `window_on`."""
    windows = []

    def make(**kwargs: Any):
        kwargs.setdefault("speed", 0)
        window = window_on(demo_server, History(tmp_path / "history.jsonl"), **kwargs)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        arun(qloop, window.shutdown())
        window.close()
        window.deleteLater()
    qapp.processEvents()


def error_messages(window) -> list[str]:
    """The messages of the error boxes shown over `window`, oldest first."""
    from PySide6.QtWidgets import QMessageBox

    return [box.text() for box in window.findChildren(QMessageBox, "errorBox")]


class Recorder:
    """Records (state, displayValue) of field widgets every time the form view repaints them."""

    def __init__(self, window, pointers: list[str]) -> None:
        self.window = window
        self.pointers = pointers
        self.seen: dict[str, list[tuple[str, str]]] = {p: [] for p in pointers}
        window.form_view.signals.updated.connect(self._record)

    def _record(self, *_args: Any) -> None:
        for p in self.pointers:
            widget = self.window.field(p)
            entry = (str(widget.property("state")), str(widget.property("displayValue")))
            if not self.seen[p] or self.seen[p][-1] != entry:
                self.seen[p].append(entry)

    def states(self, pointer: str) -> list[str]:
        return [s for s, _ in self.seen[pointer]]

    def values(self, pointer: str) -> list[str]:
        return [v for _, v in self.seen[pointer]]


@pytest.fixture(autouse=True)
def _private_user_config(tmp_path_factory, monkeypatch):
    """Apps started by a test keep their remembered settings in a temporary folder, never in the
    user's own config (QSettings follows XDG_CONFIG_HOME)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
