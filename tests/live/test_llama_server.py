"""livefill's OpenAI-compatible path against a real model server: llama-cpp-python + SmolLM2-135M.

Everything goes through livefill's own `Run` (provider "openai-compatible" by base URL: the Chat
wire with the whole schema and a `max_tokens`), as the app does — structure forced by a tool, by
`json_object` output through `delta.content`, and read through the embedded relay in settled
mode. The model is tiny: its values are poor but its JSON is grammar-constrained to the schema,
so these tests check the mechanics (states, commit, Stop, the wire's quirks), never accuracy.
What the server did is read from its log (see conftest.py): a generation that ran to its end
prints one `llama_perf_context_print: ... eval time` block; a closed stream prints
"Disconnected from client" and no such block.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from livefill.wire.events import ArgsDelta
from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.modes import Mode
from livefill.wire.providers.request import ExtractionRequest
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schema import check_document
from livefill.extraction.schemas import resolve_schema, schema_model
from livefill.wire.taps import WireFrame

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

RUN_LIMIT = 240.0  # seconds for one whole run on a busy 2-core machine (the invoice takes ~40 s)
ARGS_CARRIER = "/choices/0/delta/tool_calls/0/function/arguments"
CONTENT_CARRIER = "/choices/0/delta/content"


class Recorder:
    """A WireTap that keeps every frame and event."""

    def __init__(self) -> None:
        self.frames: list[WireFrame] = []
        self.events: list[Any] = []

    def on_read(self, data: bytes) -> None:
        pass

    def on_frame(self, frame: WireFrame) -> None:
        self.frames.append(frame)

    def on_event(self, event: Any) -> None:
        self.events.append(event)

    def chunks(self) -> list[dict[str, Any]]:
        """The JSON payloads (every `data:` but `[DONE]`)."""
        return [json.loads(f.payload) for f in self.frames if f.payload != "[DONE]"]


def config(server, scenario: str, **changes: Any) -> RunConfig:
    sc = get_scenario(scenario)
    return replace(RunConfig(
        mode=Mode.PARTIAL,
        provider="openai-compatible",
        base_url=server.base_url,
        schema_name=sc.schema_name,
        document=sc.document,
        model=server.model,
        api_key="no-key-needed",
        idle_timeout=60.0,  # the first token of a long prompt can take seconds on a busy machine
        label=f"llama {scenario}",
    ), **changes)


def form_for(scenario: str) -> FormModel:
    return FormModel(schema_model(get_scenario(scenario).schema_name))


def record_states(form: FormModel) -> dict[str, list[FieldState]]:
    """Every state each pointer showed, in order (repeats collapsed)."""
    seen: dict[str, list[FieldState]] = {}

    def on_update(update) -> None:
        for pointer in update.pointers:
            states = seen.setdefault(pointer, [])
            state = form.state(pointer)
            if not states or states[-1] is not state:
                states.append(state)

    form.subscribe(on_update)
    return seen


async def test_tools_mode_fields_go_provisional_then_settled_and_the_run_commits(llama_server):
    form = form_for("weather")
    seen = record_states(form)
    run = Run(form, config(llama_server, "weather"))
    async with asyncio.timeout(RUN_LIMIT):
        status = await run.run()

    assert status.phase is Phase.COMMITTED, status.reason
    check_document(schema_model("weather"), run.result)  # raises if it does not validate
    assert isinstance(run.result["city"], str) and run.result["city"]
    assert form.committed == run.result
    assert status.tokens_received > 1  # it streamed: more than one arguments piece
    # the field was shown while it was still being written, and settled once its string closed
    city = seen["/city"]
    assert FieldState.PROVISIONAL in city and city[-1] is FieldState.SETTLED
    assert city.index(FieldState.PROVISIONAL) < city.index(FieldState.SETTLED)


async def test_repeated_id_and_name_and_legacy_function_call_do_not_glue_the_name(llama_server):
    form = form_for("weather")
    tap = Recorder()
    cfg = config(llama_server, "weather")
    run = Run(form, cfg, tap=tap)
    async with asyncio.timeout(RUN_LIMIT):
        status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason

    asked = ExtractionRequest(
        provider=cfg.provider, base_url=cfg.base_url, schema=resolve_schema(cfg.schema_name), document=cfg.document
    ).tool_name
    tool_chunks = [c for c in tap.chunks() if (c["choices"] and c["choices"][0]["delta"].get("tool_calls"))]
    assert len(tool_chunks) >= 2
    # the quirk is really on this wire: every tool chunk repeats the id and the name, in tool_calls
    # and again in the legacy function_call (OpenAI sends them once, in the first fragment only)
    ids = set()
    for chunk in tool_chunks:
        delta = chunk["choices"][0]["delta"]
        call = delta["tool_calls"][0]
        assert call["function"]["name"] == asked
        assert delta["function_call"]["name"] == asked
        ids.add(call["id"])
    assert len(ids) == 1
    # a client that concatenates fragments as OpenAI's are meant to be would glue the name
    assert "".join(c["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] for c in tool_chunks) != asked
    # livefill took the name once and read the arguments only from tool_calls, each piece once:
    # what it parsed is exactly the tool_calls arguments, and that is the committed object
    deltas = [e for e in tap.events if isinstance(e, ArgsDelta)]
    assert {e.index for e in deltas} == {0}
    carriers = [c for f in tap.frames for c in f.carriers]
    assert carriers == [ARGS_CARRIER] * len(deltas)
    on_wire = "".join(c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for c in tool_chunks)
    assert "".join(e.text for e in deltas) == on_wire
    assert json.loads(on_wire) == run.result


async def test_stop_mid_stream_cancels_and_the_server_stops_generating(llama_server):
    finished_before = llama_server.finished_generations()
    disconnects_before = llama_server.disconnects()

    form = form_for("invoice")
    form.load(get_scenario("invoice").output)  # committed values the Stop must give back
    committed = form.committed
    run = Run(form, config(llama_server, "invoice"))
    stop_at = 6  # arguments pieces; the whole invoice is ~200

    asked: list[int] = []

    def on_status(status) -> None:
        if status.tokens_received >= stop_at and not asked:
            asked.append(status.tokens_received)
            assert run.stop()

    run.subscribe(on_status)
    async with asyncio.timeout(RUN_LIMIT):
        status = await run.run()

    assert status.phase is Phase.STOPPED, status.reason
    assert status.error_code == "cancelled"
    assert stop_at <= status.tokens_received < 50
    assert form.committed == committed and not form.running  # the form is given back exactly
    # the server saw the stream closed ...
    llama_server.wait_for(lambda: llama_server.disconnects() > disconnects_before)

    # ... and abandoned that generation: the server runs one generation at a time, so had it
    # carried on, its end (an `eval time` line) would come before the next request's. The next
    # request commits, and exactly one generation (its own) has finished since the Stop.
    follow = Run(form_for("weather"), config(llama_server, "weather"))
    async with asyncio.timeout(RUN_LIMIT):
        after = await follow.run()
    assert after.phase is Phase.COMMITTED, after.reason
    llama_server.wait_for(lambda: llama_server.finished_generations() >= finished_before + 1)
    assert llama_server.finished_generations() == finished_before + 1


async def test_json_object_output_streams_through_content_into_the_form_like_tool_arguments(llama_server):
    form = form_for("weather")
    seen = record_states(form)
    tap = Recorder()
    run = Run(form, config(llama_server, "weather", structured="json_object"), tap=tap)
    async with asyncio.timeout(RUN_LIMIT):
        status = await run.run()

    assert status.phase is Phase.COMMITTED, status.reason
    check_document(schema_model("weather"), run.result)
    assert form.committed == run.result and isinstance(run.result["city"], str) and run.result["city"]
    # it was asked for JSON in the message text, and wrote it there, a piece per chunk
    chunks = tap.chunks()
    assert not any(c["choices"] and c["choices"][0]["delta"].get("tool_calls") for c in chunks)
    pieces = [c["choices"][0]["delta"]["content"] for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert len(pieces) >= 3
    # every piece of content became an arguments delta, exactly as a tool's arguments do
    deltas = [e for e in tap.events if isinstance(e, ArgsDelta)]
    assert {e.index for e in deltas} == {0}
    assert [c for f in tap.frames for c in f.carriers] == [CONTENT_CARRIER] * len(deltas)
    assert "".join(e.text for e in deltas) == "".join(pieces)
    assert json.loads("".join(pieces)) == run.result
    # and the field grew in front of the reader, then settled
    city = seen["/city"]
    assert FieldState.PROVISIONAL in city and city[-1] is FieldState.SETTLED
    assert city.index(FieldState.PROVISIONAL) < city.index(FieldState.SETTLED)
    assert status.tokens_received > 1


async def test_settled_mode_through_the_embedded_relay_commits(llama_server):
    """The app's embedded relay reads the llama server (handed the run's key over loopback) and
    sends each value once, whole: the form only ever shows settled values."""
    from livefill.embedded.client import embedded_server

    relay = embedded_server()
    await asyncio.to_thread(relay.start)
    try:
        form = form_for("weather")
        seen = record_states(form)
        cfg = config(
            llama_server, "weather",
            mode=Mode.SETTLED, relay_url=relay.url, relay_token=relay.relay_token, relay_embedded=True,
        )  # fmt: skip
        run = Run(form, cfg)
        async with asyncio.timeout(RUN_LIMIT):
            status = await run.run()
        demo_requests = relay.requests()
    finally:
        await asyncio.to_thread(relay.stop)

    assert status.phase is Phase.COMMITTED, status.reason
    check_document(schema_model("weather"), run.result)
    assert form.committed == run.result and run.result["city"]
    assert seen["/city"] == [FieldState.SETTLED]  # never provisional: the relay settled it
    assert demo_requests == []  # the relay asked the llama server, not the demo provider
    assert "POST /v1/chat/completions" in llama_server.log_text()
