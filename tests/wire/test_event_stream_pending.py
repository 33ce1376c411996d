"""EventStream.pending: the events of one network read are told as a batch (a run counts them once)."""

from __future__ import annotations

import json

from livefill.wire.events import ArgsDelta
from livefill.wire.providers import _WIRES, EventStream


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Body:
    what = "test"
    headers: dict[str, str] = {}

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def read(self) -> bytes | None:
        return self._chunks.pop(0) if self._chunks else None


def _delta(text: str) -> bytes:
    return _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "input_json_delta", "partial_json": text}})


async def test_pending_says_whether_more_events_of_the_same_read_follow() -> None:
    start = _sse("message_start", {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                                   "content": [], "model": "demo", "usage": {"input_tokens": 1, "output_tokens": 0}}})
    start += _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "tool_use", "id": "t", "name": "extract", "input": {}}})
    one_read = start + _delta('{"a"') + _delta(": 1")
    stream = EventStream(_Body([one_read, _delta("}")]), _WIRES["anthropic"], tap=None, idle_timeout=None)
    seen = []
    while len([1 for name, _, _ in seen if name == ArgsDelta.__name__]) < 3:  # the stream is cut short after these
        event = await anext(stream)
        seen.append((type(event).__name__, getattr(event, "text", None), stream.pending))
    deltas = [(text, pending) for name, text, pending in seen if name == ArgsDelta.__name__]
    # the first read's two deltas: the first has its sibling queued; the last of a read has none
    assert deltas == [('{"a"', True), (": 1", False), ("}", False)]
