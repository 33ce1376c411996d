"""Regenerate every picture of the window that README.md and docs/ show, from the app itself.

    python scripts/docs_pictures.py             # all of them
    python scripts/docs_pictures.py --list      # each picture, and the command that makes it
    python scripts/docs_pictures.py app.png     # only the pictures whose name contains app.png

Each picture is made by the app's own commands (`livefill --screenshot`, `livefill animate`),
headless (QT_QPA_PLATFORM=offscreen), with its settings, history and data in a temporary folder:
a picture cannot drift from the app, and making one leaves no trace on this machine.
docs/screenshots/live-llama.png and compare-live-vs-demo.png need a real model server (llama-cpp-python[server] and the
SmolLM2 model: scripts/install-llama-server.sh, or LIVEFILL_LLAMA_MODEL): made when both are
there, otherwise left as it is, and said so. tests/test_docs_pictures.py checks that every
picture of the window the docs reference is one made here.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class Picture:
    """Pictures made by one run of the app: `outputs` (repository paths), `argv` (after `livefill`;
    OUT stands for the first output, LLAMA for the model server's /v1 address). A `--screenshot`
    run takes its mid-stream picture (OUT-mid.png) at the `moment` the docs describe (MOMENTS),
    rather than at the first provisional value; `leftovers` are written but shown nowhere."""

    outputs: tuple[str, ...]
    argv: tuple[str, ...]
    moment: str | None = None
    needs_llama: bool = False
    leftovers: tuple[str, ...] = ()


def _settled_but(fields: dict, pointer: str) -> bool:
    return fields[pointer]["state"] == "provisional" and all(
        f["state"] == "settled" for p, f in fields.items() if p != pointer)


#: The mid-stream moment each picture's text describes, as a test of the window's visible state
#: (livefill.gui.state_dump): README / using.md "the notes field is still being written";
#: using.md "the naive lane shows 120 for an amount that will be 1200, unmarked; partial shows
#: the same digits marked still arriving".
MOMENTS = {
    "notes": lambda s: _settled_but(s["fields"], "/notes"),
    "amount-120": lambda s: [lane["fields"]["/amount"]["text"] for lane in s["lanes"]][:2] == ["120", "120…"]
    and s["lanes"][1]["fields"]["/amount"]["state"] == "provisional",
}


SCREENSHOT = ("--settings-file", "{tmp}/settings.ini", "--history", "{tmp}/history.jsonl")
PICTURES: tuple[Picture, ...] = (
    # the README's hero: the committed demo trace, read three ways (the command the README quotes)
    Picture(("docs/animations/compare-invoice.gif",),
            ("animate", "docs/traces/invoice-demo.jsonl", "OUT", "--compare", "naive,partial,settled",
             "--fps", "10", "--width", "1280")),
    # README "What you see", docs/using.md: mid-stream (app-mid.png) and committed (app.png)
    Picture(("docs/screenshots/app.png", "docs/screenshots/app-mid.png"),
            ("--screenshot", "OUT", "--scenario", "invoice", "--mode", "partial", "--speed", "30", *SCREENSHOT),
            moment="notes"),
    # docs/using.md "Compare view": partial shows numbers before they settle, marked (the text says so)
    Picture(("docs/screenshots/compare.png", "docs/screenshots/compare-mid.png"),
            ("--screenshot", "OUT", "--scenario", "invoice", "--compare", "naive,partial,settled",
             "--show-provisional-numbers", "--speed", "30", *SCREENSHOT),
            moment="amount-120"),
    # docs/using.md "Right or wrong": every lane's fields marked against the scenario's expected answer
    Picture(("docs/screenshots/compare-right-answer.png",),
            ("--screenshot", "OUT", "--scenario", "invoice", "--compare", "naive,partial,settled", "--speed", "30",
             *SCREENSHOT), leftovers=("docs/screenshots/compare-right-answer-mid.png",)),
    # docs/using.md "Compare view": one document, every demo wire side by side (the preset "wires"'s
    # lanes), demo seed 15: Anthropic's first buffered chunk closes five tokens after the first value starts
    Picture(("docs/screenshots/compare-wires.png",),
            ("--screenshot", "OUT", "--scenario", "invoice", "--speed", "30",
             *(a for lane in ("provider=anthropic", "provider=anthropic,fine_grained=true", "provider=openai-chat",
                              "provider=openai-responses", "provider=ollama")
               for a in ("--compare-lane", f"{lane},mode=partial,seed=15")), *SCREENSHOT),
            leftovers=("docs/screenshots/compare-wires-mid.png",)),
    # docs/using.md "Right or wrong": the same lanes scored against an expected answer with one value
    # changed (docs/examples/invoice-wrong.expected.json: amount 1250), so each lane marks Amount ✗
    Picture(("docs/screenshots/compare-wrong-answer.png",),
            ("--screenshot", "OUT", "--scenario", "invoice", "--compare", "naive,partial,settled", "--speed", "30",
             "--expected", "docs/examples/invoice-wrong.expected.json", *SCREENSHOT),
            leftovers=("docs/screenshots/compare-wrong-answer-mid.png",)),
    # docs/using.md "Compare view": a live lane (SmolLM2-135M on llama.cpp, OpenAI Chat's wire, a forced
    # tool) beside a demo Anthropic lane, on the invoice: both run at once; the tiny model gets most fields wrong
    Picture(("docs/screenshots/compare-live-vs-demo.png",),
            ("--screenshot", "OUT", "--scenario", "invoice", "--speed", "30", "--idle-timeout", "90",
             "--compare-lane", "provider=openai-chat,base_url=LLAMA,model=smollm2,structured=tools",
             "--compare-lane", "provider=anthropic,live=false", *SCREENSHOT),
            needs_llama=True, leftovers=("docs/screenshots/compare-live-vs-demo-mid.png",)),
    # docs/providers.md: a real model (SmolLM2-135M on llama.cpp) filling the weather form
    Picture(("docs/screenshots/live-llama.png",),
            ("--screenshot", "OUT", "--live", "--provider", "openai-compatible", "--base-url", "LLAMA",
             "--model", "smollm2", "--scenario", "weather", "--idle-timeout", "60", *SCREENSHOT),
            needs_llama=True, leftovers=("docs/screenshots/live-llama-mid.png",)),
)


def llama_missing() -> str | None:
    """Why no real model server can be started here, or None."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("sse_starlette") is None:
        return "llama-cpp-python[server] is not installed (scripts/install-llama-server.sh)"
    if not model_path().is_file():
        return f"no model at {model_path()} (scripts/install-llama-server.sh, or LIVEFILL_LLAMA_MODEL)"
    return None


def model_path() -> Path:
    explicit = os.environ.get("LIVEFILL_LLAMA_MODEL", "").strip()
    cache = os.environ.get("LIVEFILL_MODEL_CACHE", "").strip() or "~/.cache/livefill/models"
    return Path(explicit or Path(cache) / MODEL_FILE).expanduser()


def start_llama(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """scripts/llama_server.py on a free port; (the process, its /v1 address) once it answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp / "llama.log").open("wb")
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "llama_server.py"), "--model", str(model_path()),
                             "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
                             "--n_threads", "1", "--interrupt_requests", "False"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"the llama server did not start: {(tmp / 'llama.log').read_text(errors='replace')[-2000:]}")


def command(picture: Picture, tmp: Path, llama: str = "LLAMA") -> list[str]:
    out = picture.outputs[0]  # (the app runs in the repository)
    runner = ["-m", "livefill.gui.app"] if picture.moment is None else [__file__, "--at", picture.moment]
    return [sys.executable, *runner,
            *(a.replace("OUT", out).replace("LLAMA", llama).replace("{tmp}", str(tmp)) for a in picture.argv)]


def run_at(moment: str, argv: list[str]) -> int:
    """`livefill ARGV` (a --screenshot run) whose mid-stream picture is taken at `moment`."""
    import livefill.gui.launch as launch
    from livefill.gui.app import main as app_main
    from livefill.gui.state_dump import visible_state

    wanted = MOMENTS[moment]
    first_pictures = launch._screenshots

    async def screenshots(window, path: Path) -> int:
        import asyncio

        def grab_when_seen() -> None:
            window.refresh_now()
            try:
                if not grabbed and wanted(visible_state(window, detail=False)):
                    grabbed.append(window.grab())
            except (KeyError, IndexError):
                pass

        grabbed: list = []
        task = asyncio.get_running_loop().create_task(first_pictures(window, path))
        while not task.done():
            grab_when_seen()
            await asyncio.sleep(0.005)
        code = task.result()
        if grabbed and grabbed[0].save(str(launch.mid_path(path))):
            return code
        print(f"docs_pictures: the moment {moment!r} was not seen; {launch.mid_path(path)} is the first provisional value",
              file=sys.stderr)
        return 1

    launch._screenshots = screenshots
    return app_main(argv)


def make(picture: Picture, tmp: Path) -> bool:
    """Run the app for `picture`; True if it wrote every output."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp / "data"),
               XDG_CONFIG_HOME=str(tmp / "config"), XDG_CACHE_HOME=str(tmp / "cache"))
    server = None
    llama = "LLAMA"
    if picture.needs_llama:
        why = llama_missing()
        if why:
            print(f"kept {picture.outputs[0]}: {why}")
            return True
        server, llama = start_llama(tmp)
    try:
        before = {p: (REPO / p).stat().st_mtime if (REPO / p).exists() else 0.0 for p in picture.outputs}
        print("making", ", ".join(picture.outputs), flush=True)
        proc = subprocess.run(command(picture, tmp, llama), cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        stale = [p for p in picture.outputs if not (REPO / p).exists() or (REPO / p).stat().st_mtime == before[p]]
        for leftover in picture.leftovers:
            (REPO / leftover).unlink(missing_ok=True)
        if proc.returncode != 0 or stale:
            print(f"  failed (exit {proc.returncode}; not written: {stale}):\n{proc.stdout}{proc.stderr}", file=sys.stderr)
            return False
        return True
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--at"]:
        return run_at(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only the pictures whose path contains one of these")
    parser.add_argument("--list", action="store_true", help="list the pictures and their commands, make none")
    args = parser.parse_args(argv)
    chosen = [p for p in PICTURES if not args.names or any(n in o for n in args.names for o in p.outputs)]
    if args.list:
        for p in chosen:
            print(", ".join(p.outputs), "\n    livefill", " ".join(command(p, Path("$TMP"))[3:]))
        return 0
    ok = True
    for picture in chosen:
        with tempfile.TemporaryDirectory(prefix="livefill-pictures-") as tmp:
            ok = make(picture, Path(tmp)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
