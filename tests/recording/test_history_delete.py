"""Deleting history records: for good, atomically, and never losing anybody else's record.

A second process appends in a tight loop while this one deletes: every record the child
acknowledged (its `append` returned) must be in the file afterwards, unless it was the one deleted.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from livefill.recording.history import History, HistoryWriteError, key_of
from livefill.recording.history_entries import newest_first, reopen_plan, run_fields, summarize, text_sha256
from livefill.session.session import Session
from livefill.session.settings import RunSettings
from tests.session.test_session import Script, complete

REPO = Path(__file__).resolve().parents[2]

APPENDER = r"""
import sys
from livefill.recording.history import History
history = History(sys.argv[1])
for i in range(int(sys.argv[2])):
    history.append({"run": f"child_{i}", "i": i, "pad": "x" * 200})
    sys.stdout.write(f"{i}\n")
    sys.stdout.flush()
"""


def test_delete_removes_the_record_for_good_and_keeps_every_other_line_byte_for_byte(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.append({"run": "run_a", "extraction": {"secret": "Martine"}})
    with open(path, "ab") as fh:  # a torn line in the middle (then a newline from the next append)
        fh.write(b'{"run":"run_torn","extraction":{"x')
    history.append({"run": "run_b", "extraction": {"n": 1}})
    history.append({"no_run_id": True})
    before = path.read_bytes().split(b"\n")
    assert history.delete(["run_a"]) == 1
    after = path.read_bytes()
    assert b"Martine" not in after  # gone from the disk, not just hidden
    assert after.split(b"\n") == before[1:]  # the rest, byte for byte (the torn line included)
    assert [r.get("run") for r in History(path).read()] == ["run_b", None]
    # a record without a run id has a stable key from its line
    entries = History(path).entries()
    assert entries[1].key.startswith("sha256:") and entries[1].key == key_of(entries[1].record, b'{"no_run_id":true}')
    assert history.delete([entries[1].key]) == 1
    assert [r.get("run") for r in History(path).read()] == ["run_b"]
    assert history.delete(["nothing"]) == 0 and history.delete([]) == 0
    history.append({"run": "run_c"})  # appending after a delete goes on as before
    assert [r["run"] for r in History(path).read()] == ["run_b", "run_c"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".history-")]  # no temporary left


def test_delete_after_a_torn_tail_keeps_the_tail_and_the_next_append_is_whole(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.append({"run": "run_a"})
    history.append({"run": "run_b"})
    with open(path, "ab") as fh:
        fh.write(b'{"run":"run_c","extrac')
    assert history.delete(["run_a"]) == 1
    history.append({"run": "run_d"})
    fresh = History(path)
    assert [r["run"] for r in fresh.read()] == ["run_b", "run_d"]
    assert len(fresh.problems) == 1 and "torn" in fresh.problems[0]


@pytest.mark.parametrize("where", ["mkstemp", "replace"])
def test_a_delete_that_cannot_write_says_which_file_and_changes_nothing(tmp_path, monkeypatch, where):
    import livefill.recording.history as history_module

    path = tmp_path / "history.jsonl"
    History(path).append({"run": "run_a"})
    History(path).append({"run": "run_b"})
    before = path.read_bytes()

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(history_module.tempfile if where == "mkstemp" else history_module.os, where, full)
    with pytest.raises(HistoryWriteError) as caught:
        History(path).delete(["run_a"])
    monkeypatch.undo()
    assert str(path) in str(caught.value) and "No space left" in str(caught.value)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["history.jsonl"]  # the temporary file is gone


def test_a_second_process_appending_while_this_one_deletes_loses_nothing(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    for i in range(40):
        history.append({"run": f"mine_{i}", "pad": "y" * 200})
    count = 400
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(count)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    deleted: list[str] = []
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the child is appending now
        assert first.strip() == "0"
        for i in range(0, 40, 2):  # delete while it appends
            assert history.delete([f"mine_{i}"]) == 1
            deleted.append(f"mine_{i}")
            if i == 10:  # and one of the child's, already acknowledged
                assert history.delete(["child_0"]) == 1
                deleted.append("child_0")
        acknowledged = 1 + sum(1 for _ in proc.stdout)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == 0 and acknowledged == count
    runs = [r["run"] for r in History(path).read()]
    assert len(runs) == len(set(runs))
    expected = {f"mine_{i}" for i in range(40)} | {f"child_{i}" for i in range(count)}
    assert set(runs) == expected - set(deleted)
    assert History(path).problems == []  # no torn or glued line


def test_rows_say_when_what_mode_wire_and_outcome_newest_first(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.append({"at": "2026-11-30T10:00:00+0000", "run": "run_old", "label": "weather · ollama",
                    "schema": "weather", "provider": "ollama", "mode": "partial", "extraction": {"city": "Lisbon"}})
    history.append({"at": "2026-11-30T11:00:00+0000", "run": "run_new", "label": "invoice · anthropic · lane naive",
                    "schema": "invoice", "provider": "anthropic", "mode": "naive", "extraction": {"a": 1, "b": [1, 2]},
                    "view": "compare", "lane": "naive", "scenario": "invoice"})
    rows = [summarize(e) for e in newest_first(history.entries())]
    assert [r.key for r in rows] == ["run_new", "run_old"]
    new, old = rows
    assert (new.what, new.mode, new.wire, new.values) == ("invoice", "naive", "anthropic", 3)
    assert new.outcome == "committed · 3 values · compare lane naive"
    assert (old.what, old.wire, old.outcome) == ("weather", "ollama", "committed · 1 value")  # an old record reads
    assert ("Nov" in old.when or "2026-11" in old.when or old.when.startswith("today")) and old.when.endswith(":00")
    assert new.when != old.when


def test_reopen_plan_brings_back_a_scenario_or_a_document_file_and_says_what_it_cannot(tmp_path):
    plan = reopen_plan({"label": "invoice · anthropic", "schema": "invoice", "extraction": {"a": 1}})
    assert plan.problem is None and plan.settings["scenario"] == "invoice" and plan.settings["schema_name"] is None
    assert plan.settings["document"] is None and plan.extraction == {"a": 1}
    doc = tmp_path / "receipt.txt"
    doc.write_text("Total 12", encoding="utf-8")
    record = {"document_name": "receipt.txt", "document_path": str(doc), "document_sha256": text_sha256("Total 12"),
              "schema": "invoice", "extraction": {"a": 2}}
    plan = reopen_plan(record)
    assert plan.problem is None and plan.document_path == str(doc) and plan.settings == {"schema_name": "invoice"}
    doc.unlink()
    assert "no longer at" in reopen_plan(record).problem and reopen_plan(record).extraction == {"a": 2}
    pasted = reopen_plan({"document_name": "Pasted text", "schema": "invoice", "extraction": {"a": 3}})
    assert "pasted" in pasted.problem
    assert reopen_plan({"label": "invoice"}).problem is not None  # nothing to open
    trace = tmp_path / "run.jsonl"
    trace.write_text("{}", encoding="utf-8")
    replayed = {"document_name": "replay: run.jsonl", "replay_path": str(trace), "replay_id": "run_r",
                "document_sha256": "ab", "extraction": {"a": 4}}
    plan = reopen_plan(replayed)
    assert (plan.problem, plan.trace_path, plan.trace_id, plan.document_sha256, plan.extraction) == (
        None, str(trace), "run_r", "ab", {"a": 4})
    trace.unlink()
    assert reopen_plan(replayed).problem == f"its recording {trace} is no longer there"


def test_run_fields_name_the_document():
    assert run_fields(RunSettings(scenario="weather"), view="single") == {"view": "single", "scenario": "weather"}
    own = RunSettings(document="Total 12", document_name="r.txt", document_path="/tmp/r.txt")
    assert run_fields(own, view="compare", lane="naive") == {
        "view": "compare", "lane": "naive", "document_name": "r.txt", "document_path": "/tmp/r.txt",
        "document_sha256": text_sha256("Total 12")}
    replayed = run_fields(own, view="single", replay_path="/r/run.jsonl", replay_id="run_r")
    assert (replayed["replay_path"], replayed["replay_id"]) == ("/r/run.jsonl", "run_r")


async def test_compare_and_autoplay_runs_reach_the_history_only_when_asked(tmp_path):
    path = tmp_path / "h.jsonl"
    session = Session(RunSettings(base_url="http://unused"), history=History(path), source=Script(complete()),
                      fetch_notes=False)
    session.enter_compare(["naive", "partial"])
    session.start()
    await session.wait()
    assert History(path).read() == []  # compare: not asked
    session.leave_compare()
    session.autoplaying = True
    session.start()
    await session.wait()
    assert History(path).read() == []  # autoplay: not asked
    session.autoplaying = False
    session.start()
    await session.wait()
    records = History(path).read()
    assert [(r["view"], r["scenario"]) for r in records] == [("single", "invoice")]  # the single form: as always
    session.record_all_runs = True
    session.enter_compare()
    session.start()
    await session.wait()
    session.leave_compare()
    session.autoplaying = True
    session.start()
    await session.wait()
    records = History(path).read()
    assert [(r["view"], r.get("lane")) for r in records[1:]] == [("compare", "naive"), ("compare", "partial"),
                                                                 ("autoplay", None)]
    assert json.loads(path.read_text().splitlines()[1])["label"] == "invoice · anthropic · lane naive"


def test_a_form_snapshot_puts_back_values_states_and_marks_exactly():
    from livefill.errors import UsageError
    from livefill.extraction.form import FormModel
    from livefill.extraction.schemas import schema_model

    form = FormModel(schema_model("invoice"))
    form.set_value("/customer_name", "Ms Typed")
    form.set_value("/amount", 42.5, invalid_reason="too large")
    snap = form.snapshot()
    before = (form.committed, form.states(), form.reason("/amount"))
    form.load({"customer_name": "Other"})
    assert form.committed == {"customer_name": "Other"} and form.reason("/amount") is None
    form.put_back(snap)
    assert (form.committed, form.states(), form.reason("/amount")) == before
    form.set_value("/customer_name", "changed")  # the snapshot is a copy, not a view
    assert snap != form.snapshot()
    form.put_back(snap)
    assert form.committed["customer_name"] == "Ms Typed"
    form.begin_run()
    with pytest.raises(UsageError):
        form.put_back(snap)


def test_deleting_from_a_symlinked_history_rewrites_the_target_and_keeps_the_link(tmp_path):
    """Issue 27 item 8: the link stayed a link; the deleted record left the file it points to, and
    the next append reaches that file."""
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "history.jsonl"
    link = tmp_path / "history.jsonl"
    link.symlink_to(target)
    history = History(link)
    history.append({"run": "run_a", "extraction": {"secret": "Martine"}})
    history.append({"run": "run_b"})
    assert history.delete(["run_a"]) == 1
    assert link.is_symlink() and link.resolve() == target
    assert b"Martine" not in target.read_bytes()
    history.append({"run": "run_c"})
    assert [r["run"] for r in History(target).read()] == ["run_b", "run_c"]
    assert not [p for p in (tmp_path / "real").iterdir() if p.name.startswith(".history-")]


def test_a_history_line_nested_deeper_than_json_reads_is_skipped_with_a_note(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.append({"run": "run_a"})
    with open(path, "ab") as fh:
        fh.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    history.append({"run": "run_b"})
    assert [r["run"] for r in history.read()] == ["run_a", "run_b"]
    assert any("line 2" in note for note in history.new_problems())
    assert history.delete(["run_a"]) == 1  # the deep line is kept byte for byte, not parsed into a crash
