"""Fuzzing the relay client over the real NDJSON bytes the relay sends, for every scenario x wire x mode.

The relay's response body for each scenario, on each provider wire, in settled and hybrid mode,
is recorded once per session over a real loopback relay (the session's embedded server: relay and
demo provider, `open_relay` with a tap on its network reads). Then `hypothesis` feeds those bytes,
sans-IO, to the pipeline a settled or hybrid run uses: the relay client's `RecordReader` (strict
NDJSON framer, record union, seq / start / terminal / pointer rules), the mode's reader
(`RelayReader`) applying records to a FormModel, an `error` record raised as its RunFailure, and
the final whole-document check:

- any re-slicing of the body commits the same object (the scenario's output);
- a body cut at any byte never commits (the last record without its newline is a cut too: relay
  v1 requires it);
- a flipped or inserted byte ends in a protocol or validation error (ProtocolError or a
  RunFailure: never another exception), or commits exactly the object that the records the
  client accepted spell out (a flip inside a string value can still be a well-formed stream) —
  never a value the stream did not contain.

The fast loop fuzzes `invoice` on every wire in both modes (50 examples per property); the other
scenarios run in the full suite only (`slow`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livefill.errors import ProtocolError, RunFailure
from livefill.extraction.form import FormModel
from livefill.extraction.readers import RelayReader
from livefill.relay.assembler import RecordAssembler
from livefill.relay.client import open_relay
from livefill.relay.reader import RecordReader, failure_from_record
from livefill.relay.records import CompleteRecord, ErrorRecord
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schema import check_document
from livefill.extraction.schemas import schema_model
from tests.reliability.test_fuzz_streams import slices

WIRES = ["anthropic", "openai-chat", "openai-responses", "ollama"]
MODES = ["settled", "hybrid"]
FAST_SCENARIO = "invoice"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
TYPED = (ProtocolError, RunFailure)
_BODIES: dict[tuple[str, str, str], bytes] = {}


class _Reads:
    def __init__(self) -> None:
        self.data = bytearray()

    def on_read(self, data: bytes) -> None:
        self.data += data

    def on_frame(self, frame: Any) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass


def recorded(server: Any, scenario: str, wire: str, mode: str) -> bytes:
    """The relay's response body for this case, as the network delivered it (once per session)."""
    key = (scenario, wire, mode)
    if key not in _BODIES:
        body = {"scenario": scenario, "provider": wire, "mode": mode, "demo": {"speed": 0}}

        async def record() -> bytes:
            reads = _Reads()
            async with open_relay(server.url, server.relay_token, body, tap=reads, idle_timeout=20) as records:
                async for _ in records:
                    pass
            return bytes(reads.data)

        _BODIES[key] = asyncio.run(record())
    return _BODIES[key]


def commit_of(scenario: str, mode: str, pieces: list[bytes], accepted: list[Any] | None = None) -> Any:
    """What a settled / hybrid run commits from a relay body delivered as `pieces`; raises as the
    run would. `accepted` collects every record the client's reader let through, terminal included."""
    schema_name = get_scenario(scenario).schema_name
    model = schema_model(schema_name)
    records = RecordReader(schema_name=schema_name, mode=mode)
    reader = RelayReader(None, model)  # type: ignore[arg-type]
    form = FormModel(model)
    form.begin_run()

    def apply(batch: list[Any]) -> None:
        for record in batch:
            if accepted is not None:
                accepted.append(record)
            if isinstance(record, ErrorRecord):
                raise failure_from_record(record)
            changes = reader.feed(record)
            if changes:
                form.apply_many(changes, parent_state=reader.parent_state)

    for piece in pieces:
        apply(records.feed(piece))
    apply(records.close())
    reader.end()
    value = reader.value(form.document)
    check_document(model, value)
    return value


def spelled_by(records: list[Any]) -> Any:
    """The object the accepted records spell out (fields at their pointers, items in order)."""
    assembler = RecordAssembler()
    for record in records:
        assembler.apply(record)
    return assembler.value


def cases():
    out = []
    for scenario in SCENARIO_NAMES:
        for wire in WIRES:
            for mode in MODES:
                marks = [] if scenario == FAST_SCENARIO else [pytest.mark.slow]
                out.append(pytest.param(scenario, wire, mode, marks=marks, id=f"{scenario}-{wire}-{mode}"))
    return out


@pytest.fixture
def body(demo_server, request):
    params = request.node.callspec.params
    return recorded(demo_server, params["scenario"], params["wire"], params["mode"])


@pytest.mark.parametrize(("scenario", "wire", "mode"), cases())
def test_the_recorded_body_is_the_relay_protocol(body, scenario, wire, mode):
    accepted: list[Any] = []
    assert commit_of(scenario, mode, [body], accepted) == get_scenario(scenario).output
    assert isinstance(accepted[-1], CompleteRecord) and body.endswith(b"\n")
    assert accepted[0].provider == wire
    deltas = [r for r in accepted if r.type == "delta"]
    if mode == "settled":
        assert not deltas
    elif scenario == "invoice":  # its notes are prose: hybrid mode streams them
        assert deltas


@pytest.mark.parametrize(("scenario", "wire", "mode"), cases())
def test_any_reslicing_commits_the_same_object(body, scenario, wire, mode):
    expected = get_scenario(scenario).output

    @FUZZ
    @given(st.lists(st.integers(min_value=0, max_value=len(body)), max_size=40))
    def prop(cuts):
        assert commit_of(scenario, mode, slices(body, cuts)) == expected

    prop()
    assert commit_of(scenario, mode, [body[i : i + 1] for i in range(len(body))]) == expected


@pytest.mark.parametrize(("scenario", "wire", "mode"), cases())
def test_truncation_at_any_byte_never_commits(body, scenario, wire, mode):
    @FUZZ
    @given(st.integers(min_value=0, max_value=len(body) - 1), st.lists(st.integers(min_value=0), max_size=6))
    def prop(cut, cuts):
        with pytest.raises(TYPED):
            commit_of(scenario, mode, slices(body[:cut], cuts))

    prop()
    for cut in (0, len(body) - 1, body.rfind(b"\n", 0, len(body) - 1) + 1):  # nothing; no last newline; no last line
        with pytest.raises(TYPED):
            commit_of(scenario, mode, [body[:cut]])


@pytest.mark.parametrize(("scenario", "wire", "mode"), cases())
def test_a_flipped_or_inserted_byte_is_a_typed_error_or_the_stream_own_value(body, scenario, wire, mode):
    # Half the positions are structural bytes (digits, quotes, brackets, separators, newlines):
    # where a flip changes what a record says rather than the text of a value.
    structural = [i for i, b in enumerate(body) if b in b'{}[]":,0123456789\n']

    @FUZZ
    @given(
        st.one_of(st.integers(min_value=0, max_value=len(body) - 1), st.sampled_from(structural)),
        st.one_of(st.integers(min_value=0, max_value=255), st.sampled_from(list(b'0123456789"{}[],:\n '))),
        st.booleans(),
        st.lists(st.integers(min_value=0, max_value=len(body) + 1), max_size=8),
    )
    def prop(at, byte, insert, cuts):
        if insert:
            mutated = body[:at] + bytes([byte]) + body[at:]
        else:
            if body[at] == byte:
                return
            mutated = body[:at] + bytes([byte]) + body[at + 1 :]
        accepted: list[Any] = []
        try:
            value = commit_of(scenario, mode, slices(mutated, cuts), accepted)
        except TYPED:
            return
        # it committed: exactly what the records the client accepted spell out, numbered 0, 1, 2 …,
        # one start first and one terminal (complete) last
        assert value == spelled_by(accepted), (at, byte, insert)
        assert [r.seq for r in accepted] == list(range(len(accepted)))
        assert accepted[0].type == "start" and accepted[-1].type == "complete"
        assert all(r.type not in ("start", "complete", "error") for r in accepted[1:-1])

    prop()
