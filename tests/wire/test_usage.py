"""The tokens a provider reports, read from its frames (livefill.wire.usage)."""

from __future__ import annotations

import json

import pytest

from livefill.wire.taps import WireFrame
from livefill.wire.usage import Usage, UsageTap, usage_in


def frame(payload: object) -> WireFrame:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return WireFrame(kind="sse", text="data: " + text, start=0, end=len(text), payload=text, segments=((0, 6),))


@pytest.mark.parametrize(
    ("payload", "usage"),
    [
        ({"type": "message_start", "message": {"usage": {"input_tokens": 362, "output_tokens": 1}}}, Usage(tokens_in=362, tokens_out=1)),
        ({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 213}}, Usage(tokens_out=213)),
        ({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}, Usage(tokens_in=10, tokens_out=5)),
        ({"type": "response.completed", "response": {"usage": {"input_tokens": 7, "output_tokens": 3}}}, Usage(tokens_in=7, tokens_out=3)),
        ({"done": True, "prompt_eval_count": 40, "eval_count": 12}, Usage(tokens_in=40, tokens_out=12)),
        ({"object": "chat.completion.chunk", "choices": [{"index": 0}], "usage": None}, None),
        ({"type": "content_block_delta", "delta": {"partial_json": "usage"}}, None),
        ({"usage": {"input_tokens": True, "output_tokens": -1}}, None),  # not counts
    ],
)
def test_each_wire_reports_usage_where_it_does(payload: dict, usage: Usage | None) -> None:
    assert usage_in(payload) == usage


def test_the_tap_keeps_the_latest_counts_and_fills_in_what_a_later_frame_leaves_out() -> None:
    tap = UsageTap()
    tap.on_frame(frame({"type": "ping"}))
    assert tap.usage is None
    tap.on_frame(frame({"type": "message_start", "message": {"usage": {"input_tokens": 362, "output_tokens": 1}}}))
    tap.on_frame(frame('{"usage": {"input_tokens": 9'))  # not JSON (a torn frame): ignored
    tap.on_frame(frame({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 213}}))
    assert tap.usage == Usage(tokens_in=362, tokens_out=213)
