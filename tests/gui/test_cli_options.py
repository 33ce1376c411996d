"""Every command line checks every option before anything starts: a bad value is one line naming
the option and what it takes, and exit status 2; each --help opens with a sentence for users and
examples. In-process checks of the parsers, then the real programs as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

TRACE = REPO / "docs" / "traces" / "invoice-demo.jsonl"


def _app_error(capsys, argv: list[str]) -> str:
    from livefill.gui.app_args import parse_args

    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("livefill: error: "), err  # one line, no usage block
    return err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--speed", "-5"], "--speed: give a number from 0"),
        (["--speed", "nan"], "--speed: give a number"),
        (["--speed", "fast"], "--speed: not a number"),
        (["--idle-timeout", "-1"], "--idle-timeout: give a number at least 0"),
        (["--seed", "1.5"], "--seed: not a whole number"),
        (["--replay-speed", "-2"], "--replay-speed: give a number from 0 to 100"),
        (["--autoplay", "--autoplay-pause", "-1"], "--autoplay-pause: give a number from 0"),
        (["--autoplay-pause", "2"], "--autoplay-pause goes with --autoplay"),
        (["--fault", "explode"], "unknown fault 'explode'"),
        (["--fault", "disconnect@2"], "between 0 and 1"),
        (["--fault", "blank_line"], "add --provider ollama"),
        (["--provider", "openai-chat", "--fault", "blank_line@0.3"], "applies only to the Ollama wire"),
        (["--live", "--fault", "stall"], "--fault: the demo provider's knobs"),
        (["--live", "--speed", "10", "--seed", "3"], "--speed, --seed: the demo provider's knobs"),
        (["--compare", "naive"], "--compare: compare needs 2 to 5 modes"),
        (["--slice", "0"], "--slice"),
        (["--replay", "/no/such/trace.jsonl"], "--replay: no such file"),
        (["--screenshot", "out.gif"], "must end in .png, .jpg, .jpeg or .bmp"),
        (["--screenshot", "/proc/livefill.png"], "cannot write /proc/livefill.png"),
        (["--screenshot", "x.png", "--autoplay"], "does not go with --autoplay"),
        (["--history", "/proc/history.jsonl"], "--history: cannot write"),
        (["--record", "/proc/run.jsonl"], "--record: cannot write"),
        (["--fps", "5"], "go with --animate"),
    ],
)
def test_livefill_refuses_a_bad_option_in_one_line(capsys, argv, words):
    assert words in _app_error(capsys, argv)


def test_livefill_accepts_good_options_and_fills_the_defaults(tmp_path):
    from livefill.gui.app_args import parse_args

    args = parse_args(["--provider", "ollama", "--fault", "blank_line@0.25", "--speed", "0", "--screenshot",
                       str(tmp_path / "new" / "shot.png"), "--history", str(tmp_path / "h.jsonl")])
    assert args.fault == "blank_line@0.25" and args.speed == 0.0 and args.autoplay_pause == 3.0
    args = parse_args([])
    assert args.speed == 30.0 and args.fault is None and args.provider is None
    assert parse_args(["--fault", "disconnect"]).fault == "disconnect"  # applies to every wire
    assert parse_args(["--autoplay", "--autoplay-pause", "0.5"]).autoplay_pause == 0.5


def test_a_bad_screenshot_folder_is_refused_without_making_it(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert "is a file, not a folder" in _app_error(capsys, ["--screenshot", str(blocker / "sub" / "out.png")])


def _help(program: str, capsys) -> str:
    """The program's --help text, from its own parser (in process)."""
    if program == "livefill":
        from livefill.gui.app_args import build_parser

        return build_parser().format_help()
    if program == "livefill extract":
        from livefill.cli.extract_args import build_parser

        return build_parser().format_help()
    if program == "livefill animate":
        from livefill.gui.animate import parse_args

        with pytest.raises(SystemExit):
            parse_args(["--help"])
        return capsys.readouterr().out
    from livefill.cli.server import _parser

    return _parser().format_help()


def _opening(text: str) -> tuple[str, str]:
    """The first paragraph after the usage block, and everything before the option list."""
    head = text.split("\noptions:\n", 1)[0]
    paragraphs = head.split("\n\n")
    return paragraphs[1], head


@pytest.mark.parametrize(
    ("program", "sentence", "example"),
    [
        ("livefill", "Watch a language model fill in a form", "livefill --compare naive,partial,settled"),
        ("livefill extract", "Run one extraction in the terminal", "livefill extract --scenario invoice"),
        ("livefill animate", "Replay a run recorded by livefill", "livefill animate docs/traces/invoice-demo.jsonl"),
        ("livefill-server", "Serve livefill's demo provider", "livefill-server --port 8700"),
    ],
)
def test_help_opens_with_a_sentence_for_users_and_examples(capsys, program, sentence, example):
    text = _help(program, capsys)
    assert text.startswith(f"usage: {program}")
    first, head = _opening(text)
    assert first.startswith(sentence), first
    assert "\nexamples:\n" in head and example in head
    assert first.rstrip().endswith(".") and first.count(". ") == 0  # one sentence
    for developer_words in ("console script", "asyncio", "qasync", "QApplication", "amain"):
        assert developer_words not in head


# --- the programs themselves ------------------------------------------------------------------


def _run(argv: list[str], tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    return subprocess.run([sys.executable, *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["-m", "livefill.gui.app", "--speed", "-5", "--screenshot", "{tmp}/x.png"], "livefill: error: argument --speed"),
        (["-m", "livefill.gui.app", "--provider", "anthropic", "--fault", "blank_line", "--screenshot", "{tmp}/x.png"],
         "applies only to the Ollama wire"),
        (["-m", "livefill.gui.app", "extract", "--scenario", "invoice", "--schema", "invoice", "--speed", "-5"],
         "livefill extract: argument --speed"),
        (["-m", "livefill.gui.app", "extract", "--scenario", "invoice", "--schema", "invoice", "--fault", "blank_line"],
         "speaks Anthropic's wire"),
        (["-m", "livefill.gui.app", "animate", str(TRACE), "{tmp}/o.gif", "--render-speed", "-1"], "--render-speed"),
        (["-m", "livefill.cli.server", "--port", "70000"], "livefill-server: error: argument --port"),
        (["-m", "livefill.cli.server", "--speed", "-5"], "livefill-server: error: argument --speed"),
        (["-m", "livefill.cli.server", "--relay-token-file", "{tmp}/missing"], "--relay-token-file: no such file"),
    ],
)
def test_each_program_exits_2_with_one_line_before_starting(tmp_path, argv, words):
    proc = _run([a.replace("{tmp}", str(tmp_path)) for a in argv], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.gif"))


@pytest.mark.slow
def test_a_screenshot_of_a_failed_run_says_why_it_exits_1(tmp_path):
    out = tmp_path / "shot.png"
    proc = _run(["-m", "livefill.gui.app", "--screenshot", str(out), "--fault", "http_429", "--speed", "0"], tmp_path, timeout=90)
    assert proc.returncode == 1
    assert "livefill: --screenshot: the run failed: wait 20 s and try again: rate limited" in proc.stderr, proc.stderr  # what to do first
    assert out.exists() and out.with_name("shot-mid.png").exists()
