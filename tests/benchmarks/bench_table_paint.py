"""What painting the catalog's table and following its updates cost the GUI thread, per checkout.

Run:  flock /tmp/livefill-bench.lock python tests/benchmarks/bench_table_paint.py [--repo /work/base-c4a662c] [--trials 3]

In a shown catalog FormView (light style sheet, offscreen), for each checkout given with `--repo`
(default: this one), in a process of its own importing that checkout's code (scripts/figures.py's
`sitecustomize`, as bench_launch does), alternating the order trial by trial:
- `repaint`: ms per whole-viewport repaint of the table (20 committed rows, ~70 cells shown);
- `frame`: a run streams the catalog's JSON through the real prefix parser into the form, 64
  characters (~16 tokens, a 60 Hz frame at 1,000 tok/s) per frame; per frame, ms in the table
  model's `_on_updated` and ms in the table's paint events (the partial repaints Qt asks for);
- `cell`: us per cell drawn anew (StateDelegate._draw: provisional ones, settled ones into their
  picture), and per provisional one alone.
Times are the GUI thread's CPU time (time.thread_time: on a loaded machine wall time mostly
measures the other processes), medians over the repetitions / frames (paint: the mean per frame).
The load average is printed beside each trial.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
CHARS_PER_FRAME = 64


def measure() -> dict[str, float]:
    """The figures for the checkout this process imports (the module docstring)."""
    from PySide6.QtWidgets import QApplication  # noqa: PLC0415 - the checkout's Qt code, in its process

    from livefill.extraction.form import FieldState, FormModel  # noqa: PLC0415
    from livefill.extraction.prefix import PrefixParser  # noqa: PLC0415
    from livefill.extraction.scenarios import get_scenario  # noqa: PLC0415
    from livefill.extraction.schemas import SCHEMAS  # noqa: PLC0415
    from livefill.gui import theme  # noqa: PLC0415
    from livefill.widgets import state_delegate, table_field, table_model  # noqa: PLC0415
    from livefill.widgets.form_view import FormView  # noqa: PLC0415

    app = QApplication.instance() or QApplication([])
    app.setStyle("Fusion")
    app.setPalette(theme.light_palette())
    app.setStyleSheet(theme.stylesheet("light"))
    rows = get_scenario("catalog").output["items"]

    def settle(n: int = 20) -> None:
        for _ in range(n):
            app.processEvents()

    spent: dict[str, list[float]] = {"update": [], "paint": [], "draw": [], "provisional": [], "settled": []}

    def timed(owner: type, name: str, bucket: str) -> None:
        real = getattr(owner, name)

        def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            t = time.thread_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[bucket].append(time.thread_time() - t)
                if bucket == "draw":  # (self, painter, rect, option, fonts, text, state, ...)
                    spent["provisional" if args[6] == "provisional" else "settled"].append(spent[bucket][-1])
        setattr(owner, name, wrapper)

    # wrapped before the view is made: Qt calls the overrides a wrapper had when it was made
    timed(table_model.FormTableModel, "_on_updated", "update")
    timed(table_field.FieldTable, "paintEvent", "paint")
    timed(state_delegate.StateDelegate, "_draw", "draw")
    form = FormModel(SCHEMAS["catalog"])
    view = FormView(form)
    view.resize(700, 900)
    view.show()
    settle()
    form.begin_run()
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, r) for i, r in enumerate(rows[:20])])
    form.commit()
    view.signals.flush()
    settle()
    table = view.field("/items")
    viewport = table.view.viewport()
    for _ in range(20):
        viewport.repaint()
    repeats = 200
    times = []
    for _ in range(repeats):
        t = time.thread_time()
        viewport.repaint()
        times.append(time.thread_time() - t)
    figures = {"repaint": statistics.median(times) * 1e3}

    text = json.dumps({"title": "Catalog", "items": rows}) if "title" in SCHEMAS["catalog"].model_fields else json.dumps({"items": rows})
    parser = PrefixParser()
    for bucket in ("draw", "provisional", "settled"):
        spent[bucket].clear()
    states = {s.value: s for s in FieldState}
    form.begin_run()
    view.signals.flush()
    settle()
    per_update, per_paint = [], []
    for start in range(0, len(text), CHARS_PER_FRAME):
        changes = parser.feed(text[start:start + CHARS_PER_FRAME])
        form.apply_many([(c.pointer, states[c.state.value], c.value) for c in changes])
        spent["update"].clear()
        spent["paint"].clear()
        view.signals.flush()
        app.processEvents()  # the repaints the frame asked for
        per_update.append(sum(spent["update"]))
        per_paint.append(sum(spent["paint"]))
    form.commit()
    settle()
    figures["update"] = statistics.median(per_update) * 1e3
    figures["update_mean"] = statistics.fmean(per_update) * 1e3
    figures["paint"] = statistics.fmean(per_paint) * 1e3
    figures["draw"] = statistics.median(spent["draw"]) * 1e6 if spent["draw"] else 0.0
    figures["draws"] = len(spent["draw"])
    for state in ("provisional", "settled"):
        figures[state] = statistics.median(spent[state]) * 1e6 if spent[state] else 0.0
    figures["frames"] = len(per_update)
    return figures


def _site_dir() -> str:
    sys.path.insert(0, str(HERE / "scripts"))
    try:
        import figures as figures_script  # noqa: PLC0415 - a script of this checkout, found at run time
    finally:
        sys.path.pop(0)
    return str(figures_script._site_dir())  # noqa: SLF001


def trial(repo: Path) -> dict[str, float]:
    env = dict(os.environ, FIGURES_TREE=str(repo), QT_QPA_PLATFORM="offscreen")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_site_dir(), str(repo), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{repo}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", default=None, help="a checkout to measure (repeatable; this one is always measured)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    repos = [HERE] + [Path(r).resolve() for r in (args.repo or []) if Path(r).resolve() != HERE]
    rows: dict[Path, list[dict[str, float]]] = {repo: [] for repo in repos}
    for i in range(args.trials):
        for repo in repos if i % 2 == 0 else repos[::-1]:
            load = Path("/proc/loadavg").read_text(encoding="ascii").split()[0]
            row = trial(repo)
            rows[repo].append(row)
            print(f"trial {i + 1} {repo}: load {load}  repaint {row['repaint']:.2f} ms  update/frame {row['update']:.3f} ms "
                  f"(mean {row['update_mean']:.3f})  paint/frame {row['paint']:.3f} ms  _draw {row['draw']:.0f} us "
                  f"(provisional {row['provisional']:.0f}, settled {row['settled']:.0f}; {row['draws']:.0f} cells, {row['frames']:.0f} frames)",
                  flush=True)
    print(f"\n{'checkout':<24} {'repaint ms':>12} {'update ms':>12} {'paint ms/frame':>16} {'cell us':>10} {'provisional us':>15}")
    for repo, mine in rows.items():
        def span(key: str, digits: int = 2) -> str:
            values = [r[key] for r in mine]
            return f"{min(values):.{digits}f}-{max(values):.{digits}f}"
        print(f"{str(repo)[-24:]:<24} {span('repaint'):>12} {span('update', 3):>12} {span('paint', 3):>16} {span('draw', 0):>10} {span('provisional', 0):>15}")


if __name__ == "__main__":
    main()
