"""scripts/figures.py: a benchmark's options per side (`@baseline`) and its rows matched by their words."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _figures():
    spec = importlib.util.spec_from_file_location("figures_script", REPO / "scripts" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_options_after_at_baseline_are_the_baselines_and_the_rest_the_current_trees():
    figures = _figures()
    bench = "bench_ui.py --modes partial --reads gui,worker @baseline --modes partial --reads gui"
    assert figures.bench_options(bench, baseline=False) == ["--modes", "partial", "--reads", "gui,worker"]
    assert figures.bench_options(bench, baseline=True) == ["--modes", "partial", "--reads", "gui"]
    assert figures.bench_options("bench_ui.py --reads gui", baseline=True) == ["--reads", "gui"]
    assert figures.bench_options("bench_prefix.py", baseline=False) == []


def test_a_row_only_the_current_tree_printed_shows_a_dash_on_the_baselines_side():
    figures = _figures()
    base = figures.Tree("aaa", REPO, baseline=True, outputs={"b": ["process gui p99 4.0 ms\n", "process gui p99 6.5 ms\n"]})
    now = figures.Tree("bbb", REPO, outputs={"b": ["process gui p99 3.0 ms\nprocess worker p99 2.0 ms\n"]})
    rows = figures._generic_rows("b", [base, now])
    assert rows == [["`process gui p… … ms`", "99 / 4.0–6.5", "99 / 3.0", ""],
                    ["`process worker p… … ms`", "—", "99 / 2.0", ""]]
