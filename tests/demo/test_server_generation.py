"""The demo provider's sans-IO parts: token cutting, chunking, faults laid out as steps, knobs."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.demo.protocol import FaultName, KnobError, SliceMode, parse_fault, parse_slicing
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.demo.faults import make_plan, program
from livefill.demo.generation import coalesce, malform, tokenize
from livefill.demo.knobs import DemoDefaults, parse_knobs
from livefill.demo.wires import Abort, ParsedRequest, Stall, Tokens, Write
from livefill.demo.wires.anthropic import AnthropicStream
from livefill.demo.wires.ollama import OllamaStream, go_dumps
from livefill.demo.wires.openai_chat import ChatStream
from livefill.demo.wires.openai_responses import ResponsesStream
from livefill.demo.wires.raw import RawStream

# --- tokenize ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_tokenize_round_trips_every_scenario(name: str) -> None:
    text = get_scenario(name).output_text
    for seed in (0, 1, 7, 12345):
        pieces = tokenize(text, seed)
        assert "".join(pieces) == text
        assert all(pieces)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(min_value=0, max_value=2**32))
def test_tokenize_round_trips_any_text(text: str, seed: int) -> None:
    assert "".join(tokenize(text, seed)) == text


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="0123456789 ,.-", min_size=1), st.integers(min_value=0, max_value=1000))
def test_digit_groups_are_at_most_three(text: str, seed: int) -> None:
    for piece in tokenize(text, seed):
        for run in re.findall(r"\d+", piece):
            assert len(run) <= 3, piece


def test_tokenize_is_deterministic_per_seed() -> None:
    text = get_scenario("invoice").output_text
    assert tokenize(text, 3) == tokenize(text, 3)
    assert tokenize(text, 3) != tokenize(text, 4)


def test_pieces_look_like_tokens() -> None:
    text = get_scenario("invoice").output_text
    pieces = tokenize(text, 7)
    # Words keep their leading space, and pieces ignore JSON boundaries.
    assert any(p.startswith(" ") and p[1:].isalpha() for p in pieces)
    assert any(re.fullmatch(r'[",:\]}{\[ ]{2,}', p) for p in pieces)  # merged punctuation runs
    key_starts = [p for p in pieces if re.search(r'"[a-z_]+$', p)]
    assert key_starts, "some key's opening quote joins its first letters"
    # 1200 never arrives whole.
    assert "1200" not in pieces
    assert 20 < len(pieces) < len(text)


def test_keys_split_across_pieces_for_some_seed() -> None:
    text = get_scenario("invoice").output_text
    split = [seed for seed in range(10) if not any("customer_name" in p for p in tokenize(text, seed))]
    assert split, "for some seed the key customer_name is cut across pieces"


def test_non_ascii_pieces_keep_code_points() -> None:
    text = get_scenario("multilingual").output_text
    pieces = tokenize(text, 7)
    assert "".join(pieces) == text
    encoded = b"".join(p.encode() for p in pieces)
    assert encoded == text.encode()


def test_coalesce_groups_in_order() -> None:
    pieces = tokenize(get_scenario("ticket").output_text, 7)
    chunks = coalesce(pieces, 7)
    assert [p for c in chunks for p in c] == pieces
    assert len(chunks) < len(pieces) / 2
    assert all(c for c in chunks)


@pytest.mark.parametrize("name", SCENARIO_NAMES)
@pytest.mark.parametrize("at_fraction", [0.0, 0.3, 0.9, 1.0])
def test_malform_breaks_the_json(name: str, at_fraction: float) -> None:
    text = get_scenario(name).output_text
    broken = malform(text, int(len(text) * at_fraction))
    with pytest.raises(ValueError):
        json.loads(broken)


# --- knobs ---------------------------------------------------------------------------------------


def test_parse_knobs_defaults_and_headers() -> None:
    defaults = DemoDefaults()
    knobs = parse_knobs({}, defaults)
    assert (knobs.speed, knobs.seed, knobs.fault, knobs.slicing.mode) == (30.0, defaults.seed, None, SliceMode.EVENT)
    knobs = parse_knobs(
        {
            "x-demo-speed": "0",
            "x-demo-ttft": "15",
            "x-demo-seed": "3",
            "x-demo-slice": "coalesce:20",
            "x-demo-fault": "error@0.25",
            "x-demo-scenario": "weather",
        },
        defaults,
    )
    assert knobs.speed == 0 and knobs.ttft_ms == 15 and knobs.seed == 3 and knobs.scenario == "weather"
    assert knobs.slicing.mode is SliceMode.COALESCE and knobs.slicing.window_ms == 20
    assert knobs.fault is not None and knobs.fault.name is FaultName.ERROR and knobs.fault.fraction == 0.25


def test_parse_slicing_and_fault() -> None:
    assert parse_slicing("7").size == 7
    assert parse_slicing("event").mode is SliceMode.EVENT
    assert parse_fault("stall").fraction == 0.5
    assert parse_fault("none") is None
    for bad in ("0", "-3", "coalesce:x", "bytes"):
        with pytest.raises(KnobError):
            parse_slicing(bad)
    for bad in ("explode", "error@2", "error@x"):
        with pytest.raises(KnobError):
            parse_fault(bad)
    with pytest.raises(KnobError):
        parse_knobs({"x-demo-speed": "fast"}, DemoDefaults())


# --- plans and programs --------------------------------------------------------------------------


def _knobs(fault: str | None = None, seed: int = 7):
    headers = {"x-demo-seed": str(seed)}
    if fault:
        headers["x-demo-fault"] = fault
    return parse_knobs(headers, DemoDefaults())


def _streams():
    tool = ParsedRequest(user_text="", model="m", stream=True, tool_name="record_invoice")
    text = ParsedRequest(user_text="", model="m", stream=True, as_text=True)
    fine = ParsedRequest(user_text="", model="m", stream=True, tool_name="record_invoice", fine_grained=True)
    return {
        "anthropic": lambda: AnthropicStream(tool, tool_name="record_invoice", input_tokens=10, seed=7),
        "anthropic-fine": lambda: AnthropicStream(fine, tool_name="record_invoice", input_tokens=10, seed=7),
        "anthropic-text": lambda: AnthropicStream(text, tool_name="record_invoice", input_tokens=10, seed=7),
        "chat": lambda: ChatStream(tool, tool_name="record_invoice", input_tokens=10),
        "chat-text": lambda: ChatStream(text, tool_name="record_invoice", input_tokens=10),
        "responses": lambda: ResponsesStream(tool, tool_name="record_invoice", input_tokens=10),
        "responses-text": lambda: ResponsesStream(text, tool_name="record_invoice", input_tokens=10),
        "ollama": lambda: OllamaStream(text, tool_name="record_invoice", input_tokens=10),
        "raw": lambda: RawStream(),
    }


@pytest.mark.parametrize("wire", list(_streams()))
def test_program_without_fault_carries_every_token(wire: str) -> None:
    plan = make_plan(get_scenario("invoice"), _knobs())
    steps = list(program(plan, _streams()[wire]()))
    assert sum(s.count for s in steps if isinstance(s, Tokens)) == plan.tokens_total
    assert not any(isinstance(s, (Stall, Abort)) for s in steps)


def test_program_cut_faults() -> None:
    scenario = get_scenario("invoice")
    plan = make_plan(scenario, _knobs("max_tokens@0.25"))
    assert plan.cut == round(0.25 * plan.tokens_total)
    steps = list(program(plan, _streams()["anthropic-fine"]()))
    assert sum(s.count for s in steps if isinstance(s, Tokens)) == plan.cut
    assert b'"stop_reason":"max_tokens"' in b"".join(s.data for s in steps if isinstance(s, Write))

    plan = make_plan(scenario, _knobs("disconnect"))
    steps = list(program(plan, _streams()["chat"]()))
    assert isinstance(steps[-1], Abort)
    half = steps[-1].data
    assert half.startswith(b"data: {") and not half.endswith(b"\n\n")

    plan = make_plan(scenario, _knobs("stall@0"))
    steps = list(program(plan, _streams()["ollama"]()))
    assert steps == [Stall(pings=True)]

    plan = make_plan(scenario, _knobs("blank_line@0.5"))
    body = b"".join(s.data for s in program(plan, _streams()["ollama"]()) if isinstance(s, (Write, Tokens)))
    lines = body.split(b"\n")
    assert lines.count(b"") == 2  # the injected blank line, and the empty tail after the last \n
    assert b"\n\n" in body


def test_invalid_value_and_malformed_plans() -> None:
    scenario = get_scenario("invoice")
    plan = make_plan(scenario, _knobs("invalid_value"))
    assert json.loads(plan.text)["amount"] == "twelve hundred" and plan.cut is None
    plan = make_plan(scenario, _knobs("malformed@0.5"))
    assert "".join(plan.pieces) == plan.text and plan.cut is None
    with pytest.raises(ValueError):
        json.loads(plan.text)


def test_responses_sequence_numbers_increase_from_zero() -> None:
    plan = make_plan(get_scenario("weather"), _knobs())
    frames = [s.data for s in program(plan, _streams()["responses"]()) if isinstance(s, (Write, Tokens))]
    numbers = [json.loads(f.split(b"data: ", 1)[1])["sequence_number"] for f in frames]
    assert numbers == list(range(len(frames)))


def test_go_escaping() -> None:
    line = go_dumps({"a": "<b> & \u2028 \u2029 ü"})
    assert line == '{"a":"\\u003cb\\u003e \\u0026 \\u2028 \\u2029 ü"}'
    assert json.loads(line) == {"a": "<b> & \u2028 \u2029 ü"}
