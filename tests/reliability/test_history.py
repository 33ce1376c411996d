"""The history survives a killed process, two writers at once, and a disk that refuses it.

Real subprocesses: a child appending large records in a tight loop is killed with SIGKILL at
random moments; every record whose append returned (the child says so on stdout, after `append`)
must still be there, and the file must stay readable and appendable.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from livefill.extraction.form import FormModel
from livefill.recording.history import History, HistoryWriteError
from livefill.session.run_status import Phase
from livefill.extraction.schemas import schema_model
from tests.session.test_run import INVOICE, Script, complete, make_run
from tests.gui.conftest import arun, wait_until

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys
from livefill.recording.history import History
history = History(sys.argv[1])
tag, count, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pad = "é" * size  # multi-byte characters: a tear can fall inside one
for i in range(count):
    history.append({"tag": tag, "i": i, "pad": pad})
    sys.stdout.write(f"{i}\n")  # acknowledged: append returned
    sys.stdout.flush()
"""


def child(path: Path, tag: str, count: int, size: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), tag, str(count), str(size)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_an_append_after_a_torn_tail_starts_a_new_line_and_the_tear_is_reported_once(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.append({"i": 1})
    with open(path, "ab") as fh:  # what a process killed mid-append leaves
        fh.write(b'{"i":2,"extraction":{"customer_na')
    history.append({"i": 3})
    assert history.read() == [{"i": 1}, {"i": 3}]
    assert len(history.problems) == 1
    assert str(path) in history.problems[0] and "line 2" in history.problems[0]
    fresh = history.new_problems()
    assert len(fresh) == 1 and "torn" in fresh[0] and str(path) in fresh[0]  # append found it: one note
    history.read()
    assert history.new_problems() == []  # reported once
    later = History(path)  # another run of the app reads it: reported once there too
    later.read()
    assert later.new_problems() == later.problems and len(later.problems) == 1
    assert path.read_bytes().endswith(b'customer_na\n{"i":3}\n')


def test_a_torn_tail_alone_is_skipped_not_fatal(tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'{"i":1}\n{"i":2,"pad":"\xc3')  # torn inside a multi-byte character
    history = History(path)
    assert history.read() == [{"i": 1}]
    assert len(history.problems) == 1


@pytest.mark.slow
def test_kill_9_mid_append_loses_no_acknowledged_record(tmp_path):
    path = tmp_path / "history.jsonl"
    rng = random.Random(12)
    acknowledged: list[tuple[str, int]] = []
    for round_ in range(20):
        tag = f"r{round_}"
        proc = child(path, tag, 10_000, 300_000)  # ~600 KB a record: kills land mid-write
        time.sleep(rng.uniform(0.15, 0.5))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        acknowledged += [(tag, int(n)) for n in out.split()]
    history = History(path)
    history.append({"tag": "after", "i": 0})
    records = history.read()  # never a JSONDecodeError
    seen = {(r["tag"], r["i"]) for r in records}
    assert set(acknowledged) <= seen
    assert ("after", 0) in seen
    assert records[-1] == {"tag": "after", "i": 0}
    print(f"\n{len(acknowledged)} acknowledged records over 20 kills; {len(history.problems)} torn lines skipped")


@pytest.mark.slow
def test_two_processes_appending_at_once_never_interleave(tmp_path):
    path = tmp_path / "history.jsonl"
    procs = [child(path, tag, 200, 20_000) for tag in ("a", "b")]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        assert len(out.split()) == 200
    history = History(path)
    records = history.read()
    assert history.problems == []
    assert len(records) == 400
    for tag in ("a", "b"):
        assert [r["i"] for r in records if r["tag"] == tag] == list(range(200))
    assert all(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


def test_a_full_disk_says_which_file_and_why(tmp_path, monkeypatch):
    path = tmp_path / "history.jsonl"

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("livefill.recording.history.os.write", full)
    with pytest.raises(HistoryWriteError) as info:
        History(path).append({"i": 1})
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and "No space left on device" in message


def test_an_unwritable_history_path_says_which_file_and_why(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the history's folder should be")
    path = blocker / "history.jsonl"
    with pytest.raises(HistoryWriteError) as info:
        History(path).append({"i": 1})
    assert str(path) in str(info.value) and "\n" not in str(info.value)


async def test_a_history_that_cannot_be_written_keeps_the_result_and_says_so(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("livefill.recording.history.os.write", full)
    form = FormModel(schema_model("invoice"))
    run = make_run(form, "blocking", Script(complete()), tmp_path)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == INVOICE.output
    assert "could not write the history file" in status.reason
    assert str(tmp_path / "history.jsonl") in status.reason and "No space left on device" in status.reason
    assert "internal error" not in status.reason


async def test_a_torn_tail_found_on_append_is_said_once_in_the_runs_status(tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'{"i":1}\n{"i":2,"extraction":{"customer_na')
    form = FormModel(schema_model("invoice"))
    first = await make_run(form, "blocking", Script(complete()), tmp_path).run()
    assert first.phase is Phase.COMMITTED
    assert "torn" in first.reason and str(path) in first.reason
    second = await make_run(form, "blocking", Script(complete()), tmp_path).run()
    assert second.phase is Phase.COMMITTED and second.reason == "committed"  # once is enough
    records = History(path).read()
    assert [r.get("i") for r in records] == [1, None, None]
    assert records[1]["extraction"] == records[2]["extraction"] == INVOICE.output


def test_the_window_keeps_the_result_and_says_the_history_could_not_be_written(make_window, qloop, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("livefill.recording.history.os.write", full)
    window = make_window(provider="anthropic", mode="partial")

    async def scenario():
        window.start()
        await wait_until(lambda: not window.controller.active and window.controller.last_status is not None
                         and window.controller.last_status.phase.final)

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.COMMITTED
    assert window.form.committed == INVOICE.output
    line = window.run_log.lines()[-1]
    assert "could not write the history file" in line and str(window.history.path) in line
    assert "could not write the history file" in window.status_line.text()
