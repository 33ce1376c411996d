"""core.wiretap.ForwardingTap: a tap that watches and passes everything on, in order."""

from core.events import ArgsDelta
from core.wiretap import ForwardingTap, WireRecorder


class Counting(ForwardingTap):
    __slots__ = ("reads",)

    def __init__(self, inner=None):
        super().__init__(inner)
        self.reads = 0

    def on_read(self, data: bytes) -> None:
        self.reads += 1
        super().on_read(data)


def test_forwards_reads_frames_and_events_to_the_inner_tap():
    recorder = WireRecorder()
    tap = Counting(recorder)
    tap.on_read(b'data: {"a"')
    tap.on_read(b":1}\n\n")
    tap.on_frame("sse", 'data: {"a":1}')
    tap.on_event(ArgsDelta(text='{"a":1}'))
    assert tap.reads == 2
    assert recorder.bytes_view() == b'data: {"a":1}\n\n'
    assert recorder.boundaries() == [0, 10]
    assert len(recorder.frames()) == 1 and len(recorder.events()) == 1


def test_without_an_inner_tap_it_only_watches():
    tap = Counting()
    tap.on_read(b"x")
    tap.on_frame("raw", "x")
    tap.on_event(ArgsDelta(text="x"))
    assert tap.reads == 1
