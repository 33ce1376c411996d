"""`livefill --expected FILE.json`: the window starts scoring against a chosen expected answer (as
File → Expected answer ▸ Choose a file… does); a file that cannot be used is one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from livefill.extraction.scenarios import get_scenario
from livefill.gui.app_args import parse_args
from tests.gui.test_app_process import REPO

WRONG = REPO / "docs" / "examples" / "invoice-wrong.expected.json"


def test_the_docs_example_is_the_invoice_answer_with_one_value_changed():
    wrong = json.loads(WRONG.read_text(encoding="utf-8"))
    right = get_scenario("invoice").expected
    assert {k for k in right if wrong.get(k) != right[k]} == {"amount"} and wrong.keys() == right.keys()


def test_a_file_that_cannot_be_an_expected_answer_is_refused_in_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--expected", str(path)])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert "--expected" in err[-1] and not err[-1].endswith(":"), err
    assert parse_args(["--expected", str(WRONG)]).expected == str(WRONG)


@pytest.mark.slow
def test_the_window_scores_against_the_answer_given_at_launch(tmp_path):
    state_file = tmp_path / "state.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), LIVEFILL_STATE_FILE=str(state_file))
    proc = subprocess.run(
        [sys.executable, "-m", "livefill.gui.app", "--scenario", "invoice", "--mode", "partial", "--speed", "0",
         "--expected", str(WRONG), "--autostart", "--close-after", "3", "--settings-file", str(tmp_path / "s.ini"),
         "--history", str(tmp_path / "h.jsonl")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    state = json.loads(state_file.read_text(encoding="utf-8"))
    fields = state["fields"]
    assert fields["/amount"]["marker"] == "✗ wrong", fields["/amount"]
    assert fields["/customer_name"]["marker"] == "✓ right"
    assert "✓ right / ✗ wrong" in state["legend"]["text"]
    assert any("Expected answer: invoice-wrong.expected.json, chosen" in line for line in state["run_log"]), state["run_log"]
