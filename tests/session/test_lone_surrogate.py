"""Half a character (a lone surrogate, JSON's "\\ud800") in a model's value (issue 27 item 4): every
mode fails the run on that field with a typed, printable error; nothing raises UnicodeEncodeError;
the relay's records stay records its own client reads; the history takes any record whole."""

from __future__ import annotations

import json

import pytest

from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.extraction.readers import READERS, ReaderOptions
from livefill.extraction.schemas import schema_model
from livefill.recording.history import History
from livefill.relay.records import ErrorRecord, encode_record, parse_record
from livefill.relay.settler import Settler
from livefill.session.run_status import Phase
from livefill.wire.events import BlockStop, Stop, StopReason
from tests.session.test_run import TEXT, Script, complete, make_run, pieces

HALF = "\ud800"
DOC = {**json.loads(TEXT), "customer_name": f"Martinez{HALF} SA"}
BAD_TEXT = json.dumps(DOC)  # ensure_ascii: the surrogate travels as the escape \ud800, valid JSON


@pytest.fixture
def form():
    return FormModel(schema_model("invoice"))


@pytest.mark.parametrize("mode", ["partial", "blocking"])
async def test_a_run_fails_on_the_field_with_half_a_character_and_writes_no_history(form, tmp_path, mode):
    assert "\\ud800" in BAD_TEXT
    before = form.committed
    run = make_run(form, mode, Script(complete(BAD_TEXT)), tmp_path)
    status = await run.run()
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed", status.reason
    assert status.pointer == "/customer_name"
    assert "lone surrogate" in status.reason
    status.reason.encode("utf-8")  # printable anywhere (the CLI, the status line, a log)
    assert form.committed == before
    assert not (tmp_path / "history.jsonl").exists()


@pytest.mark.parametrize("mode", ["settled", "hybrid"])
def test_the_relay_sends_records_its_own_client_reads(mode):
    settler = Settler(schema_model("invoice"), mode=mode)
    records = []
    for delta in [*pieces(BAD_TEXT, 7), BlockStop(), Stop(reason=StopReason.COMPLETE, raw="tool_use")]:
        records += settler.feed(delta)
    assert settler.done
    read = [parse_record(encode_record(record)[:-1]) for record in records]  # none refused
    (error,) = [r for r in read if isinstance(r, ErrorRecord)]
    assert (error.code, error.pointer) == ("validation_failed", "/customer_name")
    assert "lone surrogate" in error.message


def test_the_history_writes_a_record_holding_half_a_character_whole(tmp_path):
    history = History(tmp_path / "history.jsonl")
    history.append({"extraction": {"notes": f"typed {HALF} by hand"}, "mode": "partial"})
    (entry,) = history.read()
    assert entry["extraction"]["notes"] == f"typed {HALF} by hand"
    (tmp_path / "history.jsonl").read_bytes().decode("utf-8")  # the file stays UTF-8


def test_partial_mode_shows_the_provisional_value_without_raising():
    reader = READERS[Mode.PARTIAL](ReaderOptions(), schema_model("invoice"))
    shown = []
    for delta in pieces(BAD_TEXT[: BAD_TEXT.index("SA")], 5):
        shown += reader.feed(delta)
    assert any(value == f"Martinez{HALF} " for pointer, _state, value in shown if pointer == "/customer_name")
