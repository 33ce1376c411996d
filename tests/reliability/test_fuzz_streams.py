"""Fuzzing the client's decoding pipeline over the real bytes of every scenario and wire.

The demo provider's response body for each scenario x wire is recorded once (a wire tap on a real
loopback stream); then `hypothesis` feeds those bytes, sans-IO, to the same pipeline a partial or
blocking run uses — the wire's framer, its vocabulary decoder, the mode's reader applying changes
to a FormModel, the final whole-document check — with no network:

- any re-slicing of the body commits the same object (the scenario's output);
- a body truncated at any byte never commits (an Ollama body that lost only its final newline is
  not cut: its terminal line is whole, and NDJSON takes a last line without newline);
- a flipped or inserted byte ends in a typed error (the LivefillError family: protocol,
  validation, truncation, upstream) or commits exactly the JSON the mutated stream's arguments
  spell out (a flip inside a string value is still a well-formed stream) — never any other
  exception, never a value the stream did not contain.

The fast loop fuzzes the `invoice` scenario on every wire (~50 examples per property); the other
scenarios, the 20 KB `catalog` among them, run in the full suite only (`slow`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livefill.errors import LivefillError
from livefill.wire.events import ArgsDelta, ProviderError
from livefill.extraction.form import FormModel
from livefill.demo.protocol import DemoKnobs
from livefill.extraction.modes import Mode
from livefill.wire.providers import _WIRES, open_stream
from livefill.wire.providers.request import ExtractionRequest
from livefill.extraction.readers import READERS
from livefill.session.run_config import RunConfig
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schema import check_document
from livefill.extraction.schemas import resolve_schema, schema_model

WIRES = ["anthropic", "openai-chat", "openai-responses", "ollama"]
FAST_SCENARIO = "invoice"  # the fast loop's scenario; the others (and the 20 KB catalog) are slow
FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_BODIES: dict[tuple[str, str], tuple[ExtractionRequest, bytes]] = {}


class _Recorder:
    def __init__(self) -> None:
        self.data = bytearray()

    def on_read(self, data: bytes) -> None:
        self.data += data

    def on_frame(self, frame: Any) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass


def recorded(server, scenario: str, wire: str) -> tuple[ExtractionRequest, bytes]:
    """The demo provider's body for `scenario` on `wire` (recorded once per session)."""
    key = (scenario, wire)
    if key not in _BODIES:
        sc = get_scenario(scenario)
        request = ExtractionRequest(
            provider=wire,
            base_url=server.url,
            schema=resolve_schema(sc.schema_name),
            document=sc.document,
            demo_headers=DemoKnobs(scenario=scenario, speed=0).headers(),
        )

        async def record() -> bytes:
            tap = _Recorder()
            async with open_stream(request, tap=tap, idle_timeout=20.0) as events:
                async for _ in events:
                    pass
            return bytes(tap.data)

        _BODIES[key] = (request, asyncio.run(record()))
    return _BODIES[key]


def commit_of(request: ExtractionRequest, pieces: list[bytes], mode: str = "partial", said: list[str] | None = None) -> Any:
    """What a run would commit from a body delivered as `pieces`; raises as the run would.
    `said` collects the arguments' text the stream carried (its ArgsDelta events)."""
    wire = _WIRES[request.provider]
    framer, decoder = wire.framer(), wire.decoder(request)
    model = schema_model(request.schema_name)
    config = RunConfig(mode=Mode(mode), provider=request.provider, base_url="", schema_name=request.schema_name, document="")
    reader = READERS[Mode(mode)](config.reader_options, model)
    form = FormModel(model)
    form.begin_run()

    def events(evs: list[Any]) -> None:
        for event in evs:
            if isinstance(event, ProviderError):
                from livefill.errors import UpstreamError

                raise UpstreamError(f"{event.kind}: {event.message}", kind=event.kind)
            if said is not None and isinstance(event, ArgsDelta):
                said.append(event.text)
            changes = reader.feed(event)
            if changes:
                form.apply_many(changes, parent_state=reader.parent_state)

    for piece in pieces:
        for frame in framer.feed(piece):
            events(decoder.feed(frame))
    for frame in framer.close():
        events(decoder.feed(frame))
    events(decoder.close())
    reader.end()
    value = reader.value(form.document)
    check_document(model, value)
    return value


def slices(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, start = [], 0
    for stop in points + [len(data)]:
        out.append(data[start:stop])
        start = stop
    return out


def cases():
    out = []
    for scenario in SCENARIO_NAMES:
        for wire in WIRES:
            marks = [] if scenario == FAST_SCENARIO else [pytest.mark.slow]
            out.append(pytest.param(scenario, wire, marks=marks, id=f"{scenario}-{wire}"))
    return out


@pytest.fixture
def body(demo_server, request):
    scenario, wire = request.node.callspec.params["scenario"], request.node.callspec.params["wire"]
    return recorded(demo_server, scenario, wire)


@pytest.mark.parametrize(("scenario", "wire"), cases())
def test_any_reslicing_commits_the_same_object(body, scenario, wire):
    request, data = body
    expected = get_scenario(scenario).output
    assert commit_of(request, [data]) == expected
    assert commit_of(request, [data], mode="blocking") == expected

    @FUZZ
    @given(st.lists(st.integers(min_value=0, max_value=len(data)), max_size=40), st.sampled_from(["partial", "blocking"]))
    def prop(cuts, mode):
        assert commit_of(request, slices(data, cuts), mode=mode) == expected

    prop()
    assert commit_of(request, [data[i : i + 1] for i in range(len(data))]) == expected


@pytest.mark.parametrize(("scenario", "wire"), cases())
def test_truncation_at_any_byte_never_commits(body, scenario, wire):
    request, data = body
    # An NDJSON body whose last line lost only its newline still holds every byte of its terminal
    # line, and the framer takes a final line without newline (livefill.wire.ndjson): that is not a cut.
    content = len(data.rstrip(b"\r\n")) if wire == "ollama" else len(data)

    @FUZZ
    @given(st.integers(min_value=0, max_value=content - 1), st.sampled_from(["partial", "blocking"]))
    def prop(cut, mode):
        with pytest.raises(LivefillError):
            commit_of(request, [data[:cut]], mode=mode)

    prop()


@pytest.mark.parametrize(("scenario", "wire"), cases())
def test_a_flipped_or_inserted_byte_is_a_typed_error_or_the_stream_own_value(body, scenario, wire):
    request, data = body

    @FUZZ
    @given(
        st.integers(min_value=0, max_value=len(data) - 1),
        st.integers(min_value=0, max_value=255),
        st.booleans(),
        st.lists(st.integers(min_value=0, max_value=len(data) + 1), max_size=8),
    )
    def prop(at, byte, insert, cuts):
        if insert:
            mutated = data[:at] + bytes([byte]) + data[at:]
        else:
            if data[at] == byte:
                return
            mutated = data[:at] + bytes([byte]) + data[at + 1 :]
        said: list[str] = []
        try:
            value = commit_of(request, slices(mutated, cuts), said=said)
        except LivefillError:
            return
        # it committed: the value is exactly the JSON the (mutated) stream's arguments carried
        assert value == json.loads("".join(said)), (at, byte, insert)

    prop()
