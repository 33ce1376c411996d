"""LIVEFILL_STATE_FILE's dump (livefill.gui.state_dump) reads what the window shows: the fast check
that tests/gui/test_demo_script.py's eyes still work when the window's parts change."""

from __future__ import annotations

import json

from livefill.gui.state_dump import StateDump, install_state_dump, visible_state
from tests.gui.conftest import arun, wait_until


def test_the_dump_shows_the_status_line_the_fields_and_their_marks(make_window, qloop):
    window = make_window(speed=0, mode="partial")
    state = visible_state(window)
    assert state["status_line"]["text"].startswith("○ ready")
    assert set(state["fields"]) >= {"/customer_name", "/amount", "/line_items"}
    assert all(f["state"] == "empty" for f in state["fields"].values())
    assert state["legend"]["visible"] and "✎ yours" in state["legend"]["text"]

    window.start()
    arun(qloop, window.wait_runs())
    window.refresh_now()
    state = visible_state(window)
    assert state["status_line"]["text"].startswith("✓ committed")
    assert state["fields"]["/amount"]["text"] == "1200"
    assert state["fields"]["/amount"]["marker"] == "✓ right"  # scored against the scenario's expected answer
    assert state["fields"]["/line_items"]["cells"][0][0] == "DSK-140"
    assert [t["text"] for t in state["toolbar"] if t["visible"]][:2] == ["▶ Start", "■ Stop"]


def test_the_compare_view_shows_each_lane_and_the_scoreboard(make_window, qloop):
    window = make_window(speed=0, compare=["naive", "partial"])
    window.start()
    arun(qloop, window.wait_runs())
    window.refresh_now()
    state = visible_state(window)
    assert [lane["mode"] for lane in state["lanes"]] == ["naive", "partial"]
    assert state["lanes"][1]["fields"]["/amount"]["text"] == "1200"
    assert "Values shown that were never true" in state["metrics"]["rows"]
    assert state["metrics"]["columns"][0].startswith("naive")


def test_the_file_is_written_whole_and_counts_its_writes(make_window, qloop, tmp_path, monkeypatch):
    window = make_window(speed=0)
    assert install_state_dump(window) is None  # off unless asked for
    monkeypatch.setenv("LIVEFILL_STATE_FILE", str(tmp_path / "state.json"))
    dump = install_state_dump(window)
    assert isinstance(dump, StateDump)

    async def written() -> None:
        await wait_until(lambda: (tmp_path / "state.json").exists(), timeout=10)

    arun(qloop, written())
    first = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    assert first["seq"] == 1 and not first["active"]
    dump.write()  # nothing changed: nothing written
    assert json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))["seq"] == 1
