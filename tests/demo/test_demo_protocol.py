"""The demo provider's protocol: one knob type, its two encodings and their decoders, and who may
import the server."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from livefill.embedded.client import demo_request_entry, demo_requests
from livefill.demo.protocol import (
    DEFAULT_SEED,
    FIELDS,
    DemoKnobs,
    Fault,
    FaultName,
    HTTP_FAULTS,
    KnobError,
    SliceMode,
    Slicing,
)
from livefill.demo.relay_body import RelayDemoBody, knobs_from_relay_demo
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schemas import schema_model
from livefill.demo.knobs import DemoDefaults, parse_knobs
from tests.conftest import REPO

_seeds = itertools.count(930_000)  # its own range: the demo server and its request log are shared by the whole session

finite = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
slicings = st.one_of(
    st.just(Slicing()),
    st.builds(Slicing, mode=st.just(SliceMode.BYTES), size=st.integers(min_value=1, max_value=1 << 20)),
    st.builds(Slicing, mode=st.just(SliceMode.COALESCE), window_ms=finite),
)
faults = st.builds(Fault, name=st.sampled_from(FaultName), fraction=st.floats(min_value=0, max_value=1))
knobs = st.builds(
    DemoKnobs,
    scenario=st.none() | st.sampled_from(SCENARIO_NAMES),
    speed=st.none() | finite,
    ttft_ms=st.none() | finite,
    seed=st.none() | st.integers(min_value=-(2**63), max_value=2**63),
    slice=st.none() | slicings,
    fault=st.none() | faults,
    tag=st.none() | st.text(max_size=200),
    ping=st.none() | st.floats(min_value=0.01, max_value=1e6),
)


# --- one table, two encodings ---------------------------------------------------------------------


def test_the_table_lists_exactly_the_knobs_and_the_relay_body_its_keys() -> None:
    assert [f.name for f in FIELDS] == [f.name for f in dataclasses.fields(DemoKnobs)]
    assert list(RelayDemoBody.model_fields) == [f.body_key for f in FIELDS if f.body_key]
    assert all(f.header == "x-demo-" + f.header.removeprefix("x-demo-") for f in FIELDS)


@given(knobs)
def test_headers_round_trip(k: DemoKnobs) -> None:
    headers = k.headers()
    assert all(isinstance(v, str) for v in headers.values())
    assert DemoKnobs.from_headers(headers) == k


@given(knobs)
def test_relay_body_round_trip_through_json(k: DemoKnobs) -> None:
    demo = json.loads(json.dumps(k.relay_demo()))
    # the scenario travels at the body's top level; the ping interval is not a relay knob
    assert knobs_from_relay_demo(demo, scenario=k.scenario) == replace(k, ping=None)


@given(knobs)
def test_the_relay_forwards_exactly_the_headers_a_direct_request_sends(k: DemoKnobs) -> None:
    demo = json.loads(json.dumps(k.relay_demo()))
    assert knobs_from_relay_demo(demo, scenario=k.scenario).headers() == replace(k, ping=None).headers()


def test_relay_demo_carries_the_time_to_first_token() -> None:
    k = DemoKnobs(speed=12.5, ttft_ms=40, seed=3, slice="coalesce:20", fault="max_tokens@0.25")
    assert k.relay_demo() == {"speed": 12.5, "ttft": 40.0, "seed": 3, "slice": "coalesce:20", "fault": "max_tokens@0.25"}
    assert k.headers() == {
        "x-demo-speed": "12.5",
        "x-demo-ttft": "40",
        "x-demo-seed": "3",
        "x-demo-slice": "coalesce:20",
        "x-demo-fault": "max_tokens@0.25",
    }


def test_knobs_given_as_text_are_read_as_their_header_would_be() -> None:
    k = DemoKnobs(scenario=" weather ", speed="0", seed="5", slice="Event", fault="STALL", tag="")
    assert k == DemoKnobs(scenario="weather", speed=0.0, seed=5, slice=Slicing(), fault=Fault(name=FaultName.STALL))
    assert k.tag is None and k.fault is not None and k.fault.fraction == 0.5
    assert DemoKnobs(fault="none").fault is None and DemoKnobs().headers() == {} and DemoKnobs().relay_demo() == {}


def test_numbers_are_written_exactly() -> None:
    k = DemoKnobs(speed=0.1 + 0.2, fault=Fault(name=FaultName.ERROR, fraction=1 / 3), slice="coalesce:0.1234567")
    headers = k.headers()
    assert headers["x-demo-speed"] == repr(0.1 + 0.2)
    assert headers["x-demo-fault"] == f"error@{1 / 3!r}" and headers["x-demo-slice"] == "coalesce:0.1234567"
    assert DemoKnobs.from_headers(headers) == k


# --- the checks are the server's, with its messages ------------------------------------------------


@pytest.mark.parametrize(
    ("knob", "value", "message"),
    [
        ("speed", "fast", "x-demo-speed: expected a number, got 'fast'"),
        ("speed", -1, "x-demo-speed: expected a number >= 0, got '-1'"),
        ("ttft_ms", float("inf"), "x-demo-ttft: expected a number >= 0, got 'inf'"),
        ("seed", "1.5", "x-demo-seed: expected an integer, got '1.5'"),
        ("slice", "0", "x-demo-slice: expected 'event', a byte count N > 0 or 'coalesce:MS', got '0'"),
        ("fault", "error@2", "x-demo-fault: the fraction must be between 0 and 1, got '2'"),
        ("ping", 0, "x-demo-ping: expected a number >= 0.01, got '0'"),
    ],
)
def test_a_bad_value_is_refused_with_the_servers_message(knob: str, value: object, message: str) -> None:
    with pytest.raises(KnobError) as made:
        DemoKnobs(**{knob: value})  # type: ignore[arg-type]
    assert str(made.value) == message
    header = next(f.header for f in FIELDS if f.name == knob)
    with pytest.raises(KnobError) as parsed:
        parse_knobs({header: str(value)}, DemoDefaults())
    assert str(parsed.value) == message


def test_unknown_fault_names_every_known_one() -> None:
    with pytest.raises(KnobError, match="x-demo-fault: unknown fault 'explode'; known: max_tokens, error, "):
        DemoKnobs.from_headers({"x-demo-fault": "explode"})


def test_relay_body_shape_errors_are_pydantics_and_value_errors_are_the_headers() -> None:
    for bad in ({"speed": -1}, {"ttft": -1}, {"seed": 1.5}, {"tag": "x" * 201}, {"ping": 1}, {"nope": 1}):
        with pytest.raises(ValidationError):
            knobs_from_relay_demo(bad)
    with pytest.raises(KnobError, match="^x-demo-fault: unknown fault 'explode'"):
        knobs_from_relay_demo({"fault": "explode"})
    assert knobs_from_relay_demo(None, scenario="weather") == DemoKnobs(scenario="weather")


def test_server_defaults_fill_what_a_request_leaves_out() -> None:
    resolved = parse_knobs({"x-demo-slice": "9"}, DemoDefaults(speed=5.0, fault=Fault(name=FaultName.STALL)))
    assert (resolved.speed, resolved.seed, resolved.slicing.size, resolved.fault) == (
        5.0,
        DEFAULT_SEED,
        9,
        Fault(name=FaultName.STALL),
    )
    # an explicit "none" is a value: it switches a default fault off
    assert parse_knobs({"x-demo-fault": "none"}, DemoDefaults(fault=Fault(name=FaultName.STALL))).fault is None


async def test_the_relay_answers_bad_knobs_with_400_and_the_message(demo_server) -> None:
    async with httpx.AsyncClient(timeout=10.0) as client:

        async def post(demo: object) -> httpx.Response:
            return await client.post(
                demo_server.url + "/relay/v1/extract",
                json={"scenario": "weather", "demo": demo},
                headers={"authorization": f"Bearer {demo_server.relay_token}"},
            )

        r = await post({"fault": "explode"})
        assert r.status_code == 400
        assert r.json()["error"]["message"].startswith("demo: x-demo-fault: unknown fault 'explode'; known: ")
        r = await post({"ttft": -5})
        assert r.status_code == 400
        assert r.json()["error"]["message"] == "demo.ttft: Input should be greater than or equal to 0"


# --- runs send the same knobs directly and through the relay -------------------------------------


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_a_run_sends_every_knob_directly_and_through_the_relay(demo_server, mode: str) -> None:
    sc = get_scenario("weather")
    seed = next(_seeds)
    demo = DemoKnobs(scenario="weather", speed=0, ttft_ms=7, seed=seed, slice="5")
    config = RunConfig(
        mode=Mode(mode),
        provider="openai-chat",
        base_url=demo_server.url,
        schema_name=sc.schema_name,
        document=sc.document,
        demo=demo,
        relay_token=demo_server.relay_token,
    )
    status = await Run(FormModel(schema_model(sc.schema_name)), config).run()
    assert status.phase is Phase.COMMITTED, status.reason
    entry = await demo_request_entry(demo_server.url, since=0.0, run_id=status.run_id)
    assert entry is not None and entry["tag"] == status.run_id
    assert entry["knobs"]["ttft_ms"] == 7  # the relay used to drop it
    assert (entry["knobs"]["seed"], entry["knobs"]["slice"], entry["scenario"]) == (seed, "5", "weather")


async def test_the_request_log_helpers_reuse_a_given_client(demo_server) -> None:
    tag = f"client-{next(_seeds)}"
    headers = DemoKnobs(scenario="weather", tag=tag).headers()
    async with httpx.AsyncClient(timeout=10.0) as client:
        r = await client.post(demo_server.url + "/raw/v1/extract", content=b"{}", headers=headers)
        assert r.status_code == 200
        entry = await demo_request_entry(demo_server.url, since=0.0, run_id=tag, client=client)
        assert not client.is_closed  # still the caller's to close
        assert entry is not None and entry["tag"] == tag and entry["finished"]
        assert entry in await demo_requests(demo_server.url, client=client)



async def test_the_request_log_never_answers_with_another_runs_entry_nor_waits_for_one_never_sent(demo_server) -> None:
    import time
    from types import SimpleNamespace

    from livefill.session.request_notes import request_notes

    since = time.time() - 0.5
    sent, never = f"sent-{next(_seeds)}", f"never-{next(_seeds)}"
    async with httpx.AsyncClient(timeout=10.0) as client:
        r = await client.post(demo_server.url + "/raw/v1/extract", content=b"{}", headers=DemoKnobs(scenario="weather", tag=sent).headers())
        assert r.status_code == 200
    began = time.monotonic()
    # another run's finished request is in the log; this run's never reached the server
    assert await demo_request_entry(demo_server.url, since=since, run_id=never, wait=30.0) is None
    assert time.monotonic() - began < 10  # given up after the arrival wait, not the 30 s
    lanes = [
        SimpleNamespace(name=name, run=SimpleNamespace(status=SimpleNamespace(run_id=tag)), mode=SimpleNamespace(needs_relay=False))
        for name, tag in (("a", sent), ("b", never))
    ]
    began = time.monotonic()
    notes = await request_notes(lanes, demo_server.url, since=since, wait=30.0)
    assert time.monotonic() - began < 10
    assert set(notes) == {"a"} and notes["a"].startswith("server finished")
    relay = [SimpleNamespace(name="settled", run=SimpleNamespace(status=SimpleNamespace(run_id=never)),
                             mode=SimpleNamespace(needs_relay=True))]
    # a relay lane whose request never came is not given the entry of another run (tagged with its id)
    assert await request_notes(relay, demo_server.url, since=since, wait=30.0) == {}


# --- who may import the server --------------------------------------------------------------------


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


# The server side: what core/server/ held before the package was laid out by flow.
SERVER_MODULES = ("livefill.serving", "livefill.embedded.app", "livefill.relay.app", "livefill.relay.serve", "livefill.cli.server",
                  *(f"livefill.demo.{m}" for m in ("provider", "faults", "generation", "knobs", "request_log", "replay", "streaming", "wires")))


def _is_server(module: str) -> bool:
    return any(module == s or module.startswith(s + ".") for s in SERVER_MODULES)


def test_no_gui_or_widget_module_imports_the_server() -> None:
    files = sorted(p for d in ("gui", "widgets") for p in (REPO / d).rglob("*.py"))
    assert len(files) > 10
    offenders = {
        str(p.relative_to(REPO)): sorted(m for m in _imported_modules(p) if _is_server(m))
        for p in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_import_walk_sees_every_spelling(tmp_path: Path) -> None:
    for source in (
        "import livefill.serving.runner\n",
        "from livefill.demo.knobs import FaultName\n",
        "from livefill.embedded import app as server\n",
        "def f():\n    from livefill.relay import app\n",
    ):
        path = tmp_path / "m.py"
        path.write_text(source)
        assert any(_is_server(m) for m in _imported_modules(path)), source


# --- which faults apply to which wire: one table ----------------------------------------------


def _server_wires():
    from livefill.demo.wires.anthropic import AnthropicWire
    from livefill.demo.wires.ollama import OllamaWire
    from livefill.demo.wires.openai_chat import ChatWire
    from livefill.demo.wires.openai_responses import ResponsesWire
    from livefill.demo.wires.raw import RawWire

    return [AnthropicWire(), ChatWire(), ResponsesWire(), OllamaWire(generate=False), OllamaWire(generate=True), RawWire()]


def test_the_fault_table_names_the_wires_the_demo_provider_serves():
    from livefill.demo.protocol import FAULT_SCOPES, WIRES

    assert sorted(w.name for w in _server_wires()) == sorted(WIRES)
    for scope in FAULT_SCOPES.values():
        assert scope.wires <= set(WIRES) and scope.why


def test_every_providers_wire_is_one_the_demo_provider_serves():
    from livefill.demo.protocol import WIRES
    from livefill.wire.providers.spec import PROVIDER_SPECS

    assert {s.wire for s in PROVIDER_SPECS.values()} <= set(WIRES)


def test_a_whole_response_with_the_error_fault_is_each_wires_own_server_error():
    statuses = {w.name: (w.server_error.status, w.server_error.kind) for w in _server_wires()}
    assert statuses["anthropic"] == (529, "overloaded_error")
    assert {statuses[name] for name in statuses if name != "anthropic"} == {(500, "server_error")}


@pytest.mark.parametrize("fault", [f for f in FaultName if f not in HTTP_FAULTS], ids=lambda f: f.value)
def test_the_demo_provider_refuses_exactly_the_faults_the_table_says_do_not_apply(fault):
    from livefill.demo.protocol import fault_applies, faults_on
    from livefill.demo.faults import check_fault
    from livefill.demo.wires import BadRequest

    for wire in _server_wires():
        if fault_applies(fault, wire.name):
            check_fault(Fault(name=fault), wire, stream=True)
            assert fault in faults_on(wire.name)
        else:
            with pytest.raises(BadRequest, match=fault.value):
                check_fault(Fault(name=fault), wire, stream=True)
            assert fault not in faults_on(wire.name)


def test_blank_line_is_ollama_only_and_error_everywhere_but_raw():
    from livefill.demo.protocol import fault_refusal, faults_on

    assert FaultName.BLANK_LINE in faults_on("ollama")
    for wire in ("anthropic", "openai-chat", "openai-responses", "raw"):
        assert FaultName.BLANK_LINE not in faults_on(wire)
        assert "Ollama" in (fault_refusal("blank_line", wire) or "")
    assert FaultName.ERROR not in faults_on("raw") and FaultName.ERROR in faults_on("anthropic")
    assert fault_refusal("blank_line", "ollama", stream=False) == "blank_line applies only to a streamed response"
    assert fault_refusal("disconnect", "raw") is None
