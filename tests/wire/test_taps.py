"""livefill/wire/taps.py: the one WireTap shape, the frame it is told, the tee, the read watch."""

from __future__ import annotations

from livefill.wire.events import ArgsDelta
from livefill.wire.ndjson import NDJSONFramer
from livefill.wire.sse import SSEDecoder
from livefill.wire.taps import ReadWatch, Tee, WireFrame, sse_frame, tee, text_frame
from livefill.recording.wiretap import WireRecorder


class Log:
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def on_read(self, data: bytes) -> None:
        self.log.append((self.name, "read", data))

    def on_frame(self, frame: WireFrame) -> None:
        self.log.append((self.name, "frame", frame.text))

    def on_event(self, event) -> None:  # noqa: ANN001
        self.log.append((self.name, "event", event))


def test_tee_tells_every_tap_everything_in_order() -> None:
    log: list = []
    a, b = Log("a", log), Log("b", log)
    tap = tee(a, None, b)
    assert isinstance(tap, Tee)
    (line,) = NDJSONFramer().feed(b'{"x": 1}\n')
    tap.on_read(b"xy")
    tap.on_frame(text_frame("ndjson", line))
    tap.on_event(ArgsDelta(text="x"))
    assert log == [
        ("a", "read", b"xy"), ("b", "read", b"xy"),
        ("a", "frame", '{"x": 1}'), ("b", "frame", '{"x": 1}'),
        ("a", "event", ArgsDelta(text="x")), ("b", "event", ArgsDelta(text="x")),
    ]


def test_tee_of_one_tap_is_that_tap_and_of_none_is_none() -> None:
    a = Log("a", [])
    assert tee(a) is a and tee(None, a, None) is a
    assert tee() is None and tee(None) is None


def test_read_watch_counts_bytes_and_notes_the_last_read() -> None:
    ticks = iter([1.0, 2.5, 4.0])
    watch = ReadWatch(clock=lambda: next(ticks))
    recorder = WireRecorder()
    tap = tee(watch, recorder)
    assert watch.last_read == 1.0 and watch.bytes == 0
    tap.on_read(b'data: {"a"')
    tap.on_read(b":1}\n\n")
    assert watch.bytes == 15 and watch.last_read == 4.0
    assert recorder.bytes_view() == b'data: {"a":1}\n\n'


def test_an_sse_frame_maps_payload_characters_to_bytes_line_by_line() -> None:
    body = 'event: x\r\ndata: {"a":\r\ndata:"é😀"}\r\n\r\n'.encode()
    (event,) = SSEDecoder().feed(body)
    frame = sse_frame(event, ("/a",))
    assert frame.text == 'event: x\ndata: {"a":\ndata: "é😀"}'
    assert (frame.start, frame.end) == (0, len(body) - 2)
    assert frame.payload == '{"a":\n"é😀"}' and frame.carriers == ("/a",)
    # every character of the payload begins at the byte that carries it
    for k, ch in enumerate(frame.payload):
        at = frame.payload_byte(k)
        if ch != "\n":  # the LF joining two data lines stands for the first line's ending
            assert body[at:].startswith(ch.encode()), k
    assert frame.payload_byte(len(frame.payload)) == body.index(b"}") + 1


def test_a_text_frame_is_one_contiguous_run_of_utf8() -> None:
    framer = NDJSONFramer()
    framer.feed(b'{"n": 1}\n')
    (line,) = framer.feed('{"s": "Zürich"}\n'.encode())
    frame = text_frame("ndjson", line, ("/s",))
    assert type(frame.payload) is str and frame.payload == '{"s": "Zürich"}'
    assert (frame.start, frame.end) == (9, 9 + len('{"s": "Zürich"}'.encode()))
    assert frame.payload_byte(9) == 9 + len('{"s": "Zü'.encode())
