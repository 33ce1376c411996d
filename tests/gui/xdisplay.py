"""A real X display for tests that drive the `livefill` process from outside, as a presenter does.

`XDisplay` starts Xvfb at a given size with a window manager (openbox); `LiveApp` starts the real
program on it with `LIVEFILL_STATE_FILE` (livefill.gui.state_dump) and drives it with xdotool:
keys, clicks at the rectangles the state file gives, typing. `LiveApp.wait(...)` polls the state
file until a condition holds (generous timeouts: a loaded 2-core machine is slow, not wrong);
`LiveApp.shot(name)` saves a picture of the whole screen (`import -window root`) in the test's
folder and, when `LIVEFILL_DEMO_PICTURES` names a folder, there too. `missing_tools()` says
what this machine lacks (the test is skipped for it outside CI only).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "openbox": "openbox", "import": "imagemagick", "xprop": "x11-utils"}


def missing_tools() -> list[str]:
    """The Debian packages whose programs this machine lacks."""
    return sorted({package for program, package in TOOLS.items() if shutil.which(program) is None})


class XDisplay:
    """Xvfb `:number` at `width` × `height` with openbox; `stop()` ends both."""

    def __init__(self, number: int, width: int, height: int, folder: Path) -> None:
        number = self._free(number)
        self.name = f":{number}"
        self.width, self.height = width, height
        self.env = dict(os.environ, DISPLAY=self.name)
        self.log = folder / f"x{number}.log"
        with self.log.open("w") as log:
            self.xvfb = subprocess.Popen(["Xvfb", self.name, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                                         stdout=log, stderr=subprocess.STDOUT)
        self.wm: subprocess.Popen | None = None
        try:
            self._until(lambda: self._run("xprop", "-root", check=False) is not None, "the X server")
            self._until(self._window_manager_up, "the window manager")
        except BaseException:
            self.stop()
            raise

    def _window_manager_up(self) -> bool:
        """True once openbox manages the screen; (re)starts it when it is not running (one started
        the moment the server came up may not reach it yet)."""
        if self.wm is None or self.wm.poll() is not None:
            with self.log.open("a") as log:
                self.wm = subprocess.Popen(["openbox"], env=self.env, stdout=log, stderr=subprocess.STDOUT)
        return "window id" in (self._run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK", check=False) or "")

    @staticmethod
    def _free(number: int) -> int:
        while Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists():
            number += 100  # someone else's display: one well away from the usual numbers
        return number

    def _run(self, *argv: str, check: bool = True) -> str | None:
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            if check:
                raise AssertionError(f"{' '.join(argv)} failed: {proc.stderr.strip()}")
            return None
        return proc.stdout

    def _until(self, predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.xvfb.poll() is not None:
                raise AssertionError(f"Xvfb {self.name} ended: {self.log.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} on {self.name} did not come up within {timeout:.0f} s")
            time.sleep(0.1)

    def stop(self) -> None:
        for proc in (self.wm, self.xvfb):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()


class LiveApp:
    """The `livefill` program on `display`, started with `args`, read through its state file."""

    def __init__(self, display: XDisplay, folder: Path, args: Sequence[str], pictures: Path | None = None) -> None:
        self.display = display
        self.folder = folder
        self.pictures = pictures
        self.state_file = folder / "state.json"
        self.state_file.unlink(missing_ok=True)  # (a previous run's: never read as this one's)
        self.shots: list[Path] = []
        self.log = folder / "app.log"
        env = dict(display.env, QT_QPA_PLATFORM="xcb", LIVEFILL_STATE_FILE=str(self.state_file),
                   XDG_DATA_HOME=str(folder / "data"), XDG_CONFIG_HOME=str(folder / "config"),
                   XDG_CACHE_HOME=str(folder / "cache"), HOME=str(folder / "home"))
        env.pop("QT_SCALE_FACTOR", None)
        (folder / "home").mkdir(exist_ok=True)
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "livefill.gui.app", *args], cwd=REPO, env=env,
                                         stdout=log, stderr=subprocess.STDOUT)
        self.last: dict[str, Any] = {}

    # -- reading ------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The latest state the app wrote ({} before the first)."""
        try:
            self.last = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        return self.last

    def wait(self, predicate: Callable[[dict[str, Any]], Any], what: str, timeout: float = 60.0,
             after: int | None = None) -> dict[str, Any]:
        """Poll the state until `predicate(state)` is true (and, with `after`, its seq is later);
        that state. Fails saying `what` was awaited, with the last state's main lines."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"livefill exited ({self.proc.returncode}) waiting for {what}:\n{self.log.read_text()}")
            state = self.state()
            try:
                ok = state and (after is None or state.get("seq", 0) > after) and predicate(state)
            except (KeyError, IndexError, TypeError, StopIteration, AssertionError):  # not there yet
                ok = False
            if ok:
                return state
            if time.monotonic() > deadline:
                self.shot(f"timeout-{what[:40]}")
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last state: {summary(state)}")
            time.sleep(0.05)

    @property
    def seq(self) -> int:
        return int(self.state().get("seq", 0))

    # -- driving ------------------------------------------------------------------------------

    def xdotool(self, *argv: str) -> None:
        self.display._run("xdotool", *argv)

    def key(self, *keys: str) -> None:
        """Press keys (xdotool names: ctrl+Return, Escape, F11) in the window that has the focus."""
        self.xdotool("key", "--clearmodifiers", "--delay", "80", *keys)

    def type(self, text: str) -> None:
        self.xdotool("type", "--clearmodifiers", "--delay", "60", text)

    def click(self, rect: Sequence[int], *, double: bool = False, x: float = 0.5, y: float = 0.5) -> None:
        """Click at a point of a rectangle [x, y, w, h] on the screen (its middle by default)."""
        px, py = int(rect[0] + rect[2] * x), int(rect[1] + rect[3] * y)
        self.xdotool("mousemove", "--sync", str(px), str(py))
        self.xdotool("click", *(["--repeat", "2", "--delay", "120"] if double else []), "1")

    def focus_window(self) -> None:
        """Give the app's window the keyboard (a window manager may leave the focus on the root)."""
        found = self.display._run("xdotool", "search", "--onlyvisible", "--pid", str(self.proc.pid), check=False)
        for window in (found or "").split():
            self.display._run("xdotool", "windowactivate", "--sync", window, check=False)
            self.display._run("xdotool", "windowfocus", "--sync", window, check=False)

    def click_until(self, rect: Sequence[int], predicate: Callable[[dict[str, Any]], Any], what: str) -> dict[str, Any]:
        """Click `rect` until `predicate(state)` holds (a click the app missed is tried again)."""
        for attempt in range(3):
            self.click(rect)
            try:
                return self.wait(predicate, what, timeout=10 if attempt < 2 else 30)
            except AssertionError:
                if attempt == 2:
                    raise
        raise AssertionError(what)

    def hover(self, rect: Sequence[int]) -> None:
        self.xdotool("mousemove", "--sync", str(int(rect[0] + rect[2] / 2)), str(int(rect[1] + rect[3] / 2)))

    def open(self, rect: Sequence[int] | Callable[[dict[str, Any]], Sequence[int]], text: str, what: str) -> None:
        """Click `rect` (a menu title, a drop-down button; or a function of the state giving it, read
        again before each try) until a list with an entry starting with `text` is open. The window
        must have kept its place for a moment first: a rectangle read while the window manager
        still moves it would land elsewhere (on the title bar's window menu, say)."""
        def where() -> list[int]:
            return list(rect(self.state()) if callable(rect) else rect)

        for attempt in range(3):
            deadline = time.monotonic() + 10
            seen = where()
            while time.monotonic() < deadline:  # the same rectangle in states 0.3 s apart
                time.sleep(0.3)
                now = where()
                if now == seen:
                    break
                seen = now
            self.click(seen)
            try:
                self.wait(lambda s: any(i["text"].startswith(text) for i in (s["popup"] or {}).get("items", [])),
                          f"{what}: an open list with {text!r}", timeout=10 if attempt < 2 else 30)
                return
            except AssertionError:
                if attempt == 2:
                    raise
                self.key("Escape")  # whatever the click opened instead

    def choose(self, text: str, what: str) -> dict[str, Any]:
        """In the open menu or drop-down list, click the entry whose text starts with `text`."""
        state = self.wait(lambda s: any(i["text"].startswith(text) for i in (s["popup"] or {}).get("items", [])),
                          f"{what}: an open list with {text!r}", timeout=30)
        item = next(i for i in state["popup"]["items"] if i["text"].startswith(text))
        self.hover(item["rect"])
        self.click(item["rect"])
        return item

    def shot(self, name: str) -> Path:
        """A picture of the whole screen, in the test's folder (and LIVEFILL_DEMO_PICTURES's)."""
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
        path = self.folder / f"{len(self.shots):02d}-{safe}.png"
        self.display._run("import", "-window", "root", str(path), check=False)
        self.shots.append(path)
        if self.pictures is not None and path.exists():
            self.pictures.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, self.pictures / path.name)
        return path

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


def summary(state: dict[str, Any]) -> str:
    """The lines of a state worth reading in a failure message."""
    if not state:
        return "(no state written yet)"
    keep = {k: state.get(k) for k in ("seq", "active", "comparing", "presenting", "popup", "dialogs", "focus")}
    keep["status_line"] = (state.get("status_line") or {}).get("text")
    keep["status_bar"] = (state.get("status_bar") or {}).get("message")
    keep["fields"] = {p: (f["text"], f["state"], f["marker"]) for p, f in (state.get("fields") or {}).items()}
    keep["lanes"] = [(lane["name"], (lane.get("status") or {}).get("text"),
                      {p: (f["text"], f["state"]) for p, f in lane["fields"].items() if p == "/amount"})
                     for lane in state.get("lanes") or []]
    keep["metrics"] = (state.get("metrics") or {}).get("rows")
    keep["window"] = state.get("window")
    return json.dumps(keep, ensure_ascii=False, indent=1)
