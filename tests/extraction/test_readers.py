"""livefill/extraction/readers.py: the reader of each mode, the shared extraction core, the one stop-reason map;
and livefill/errors.py's one relay-code map."""

from __future__ import annotations

import json

import pytest

from livefill.errors import (
    FAILURES,
    ProtocolError,
    RunFailure,
    Truncated,
    UpstreamError,
    ValidationFailed,
    code_of,
    failure_for,
)
from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason
from livefill.extraction.form import FieldState
from livefill.extraction.modes import MODES
from livefill.extraction.readers import READERS, ArgsReader, PartialReader, ReaderOptions, RelayReader, stop_failure
from livefill.relay.settler import Settler
from livefill.relay.records import ERROR_CODES, ErrorRecord
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model

INVOICE = schema_model("invoice")


def test_every_mode_has_a_reader_and_relay_modes_read_records():
    assert set(READERS) == set(MODES)
    for mode, spec in MODES.items():
        reader = READERS[mode](ReaderOptions(), INVOICE)
        assert isinstance(reader, RelayReader) == spec.needs_relay


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (StopReason.LENGTH, Truncated),
        (StopReason.REFUSAL, UpstreamError),
        (StopReason.COMPLETE, None),
        (StopReason.OTHER, None),
    ],
)
def test_one_stop_reason_map_for_the_run_and_the_relay(reason, expected):
    stop = Stop(reason=reason, raw="raw_reason")
    failure = stop_failure(stop)
    if expected is None:
        assert failure is None
        return
    assert type(failure) is expected and "raw_reason" in failure.message
    # the relay turns the same stop into an error record with the same code
    settler = Settler(INVOICE, run_id="r")
    settler.feed(ArgsDelta(text='{"customer_name": "A"'))
    assert settler.feed(stop)[-1].code == failure.code
    # and the run's reader raises it
    reader = PartialReader(ReaderOptions(), INVOICE)
    reader.feed(ArgsDelta(text='{"customer_name": "A"'))
    with pytest.raises(expected):
        reader.feed(stop)


def test_the_partial_reader_and_the_settler_share_their_checks():
    text = '{"customer_name": "A", "bogus":'
    settler = Settler(INVOICE, run_id="r")
    record = settler.feed(ArgsDelta(text=text))[-1]
    assert isinstance(record, ErrorRecord) and record.code == "validation_failed" and record.pointer == "/bogus"
    reader = PartialReader(ReaderOptions(), INVOICE)
    with pytest.raises(ValidationFailed) as info:
        reader.feed(ArgsDelta(text=text))
    assert info.value.pointer == "/bogus"


@pytest.mark.parametrize(("strings", "numbers"), [(True, False), (False, True), (False, False), (True, True)])
def test_the_partial_reader_hides_what_its_options_say_is_not_shown(strings, numbers):
    reader = PartialReader(ReaderOptions(show_provisional_strings=strings, show_provisional_numbers=numbers), INVOICE)
    changes = reader.feed(ArgsDelta(text='{"customer_name": "Mar'))
    changes += reader.feed(ArgsDelta(text='tinez", "amount": 12'))
    shown = {pointer: (state, value) for pointer, state, value in changes}
    name_state = FieldState.PROVISIONAL if strings else FieldState.PENDING
    assert (name_state, "Mar" if strings else None) in [(s, v) for p, s, v in changes if p == "/customer_name"]
    assert shown["/customer_name"] == (FieldState.SETTLED, "Martinez")
    assert shown["/amount"] == ((FieldState.PROVISIONAL, 12) if numbers else (FieldState.PENDING, None))


def test_reader_options_default_to_strings_shown_and_numbers_hidden():
    assert ReaderOptions() == ReaderOptions(show_provisional_strings=True, show_provisional_numbers=False)


def test_args_reader_keeps_the_changes_before_a_failure():
    reader = ArgsReader(INVOICE)
    out: list = []
    with pytest.raises(ValidationFailed):
        reader.feed(ArgsDelta(text='{"customer_name": "A", "amount": "x",'), out)
    assert [change.pointer for change, _where in out if change.pointer] == ["/customer_name"]


def test_a_valid_document_reads_to_the_same_value_as_json_loads():
    text = get_scenario("invoice").output_text
    reader = PartialReader(ReaderOptions(show_provisional_numbers=True), INVOICE)
    changes = []
    for i in range(0, len(text), 7):
        changes += reader.feed(ArgsDelta(text=text[i : i + 7]))
    changes += reader.feed(BlockStop())
    reader.feed(Stop(reason=StopReason.COMPLETE))
    reader.end()
    assert reader.value(None) == json.loads(text)
    assert changes[-1][1] is FieldState.SETTLED


def test_one_relay_error_map_both_ways():
    assert set(FAILURES) == set(ERROR_CODES)
    for code in ERROR_CODES:
        failure = failure_for(code, "m", "/p")
        assert failure.code == code and code_of(failure) == code and failure.pointer == "/p"
    # an error record with protocol_error is a well-formed terminal, not a breach by the relay
    failure = failure_for("protocol_error", "relay: bad bytes upstream")
    assert isinstance(failure, RunFailure) and not isinstance(failure, ProtocolError)
    assert code_of(ProtocolError("x")) == "protocol_error" and code_of(KeyError("x")) == "upstream_error"
