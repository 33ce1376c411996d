"""livefill/wire/sse.py: every WHATWG event-stream rule, under every way the bytes can be cut.

Each case is checked fed whole, byte by byte, in random cuts (hypothesis) and with trailing
garbage (an unfinished event after the last blank line, which close() must discard).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.errors import UsageError
from livefill.wire.sse import ServerSentEvent, SSEDecoder

E = ServerSentEvent


def decode_chunks(chunks: list[bytes]) -> list[ServerSentEvent]:
    d = SSEDecoder()
    out: list[ServerSentEvent] = []
    for c in chunks:
        out += d.feed(c)
    out += d.close()
    return out


def whole(data: bytes) -> list[bytes]:
    return [data]


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def cut_at(data: bytes, positions: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *[p for p in positions if 0 <= p <= len(data)]})
    return [data[a:b] for a, b in zip(points, points[1:])]


def check_all_cuttings(data: bytes, expected: list[ServerSentEvent], garbage: bytes = b"data: never\n") -> None:
    """Whole, byte by byte, with trailing garbage, and a few fixed cuts."""
    assert decode_chunks(whole(data)) == expected
    assert decode_chunks(bytewise(data)) == expected
    assert decode_chunks([data + garbage]) == expected
    assert decode_chunks(bytewise(data + garbage)) == expected
    for k in (2, 3, 5):
        assert decode_chunks(cut_at(data, list(range(0, len(data), k)))) == expected


# ---------------------------------------------------------------------------------------------
# The examples in the WHATWG spec ("9.2.6 Interpreting an event stream")


def test_spec_example_stock_ticker_three_data_lines() -> None:
    data = b"data: YHOO\ndata: +2\ndata: 10\n\n"
    check_all_cuttings(data, [E(data="YHOO\n+2\n10")])


def test_spec_example_test_stream_comment_id_and_leading_space() -> None:
    data = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    check_all_cuttings(
        data,
        [E(data="first event", id="1"), E(data="second event", id=""), E(data=" third event", id="")],
    )


def test_spec_example_empty_data_fields_and_event_without_blank_line() -> None:
    # "data" twice with no colon: "" then "\n"; the last "data:" has no blank line: discarded.
    data = b"data\n\ndata\ndata\n\ndata:"
    check_all_cuttings(data, [E(data=""), E(data="\n")], garbage=b"")


def test_spec_example_space_after_colon_is_optional() -> None:
    data = b"data:test\n\ndata: test\n\n"
    check_all_cuttings(data, [E(data="test"), E(data="test")])


def test_spec_example_event_types() -> None:
    data = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
    check_all_cuttings(
        data,
        [E(event="add", data="73857293"), E(event="remove", data="2153"), E(event="add", data="113411")],
    )


# ---------------------------------------------------------------------------------------------
# Line endings


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_line_endings_lf_crlf_and_lone_cr(eol: bytes) -> None:
    data = b"event: a" + eol + b"data: x" + eol + b"data: y" + eol + eol + b"data: z" + eol + eol
    check_all_cuttings(data, [E(event="a", data="x\ny"), E(data="z")])


def test_mixed_line_endings_in_one_stream() -> None:
    data = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"
    check_all_cuttings(data, [E(data="a\nb\nc"), E(data="d")])


def test_cr_at_end_of_chunk_then_lf_at_start_of_next_is_one_line_ending() -> None:
    # If the LF were taken as a blank line, "a" would be dispatched on its own.
    chunks = [b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]
    assert decode_chunks(chunks) == [E(data="a\nb")]


def test_cr_ending_a_chunk_dispatches_without_waiting_for_the_next() -> None:
    d = SSEDecoder()
    assert d.feed(b"data: a\r\r") == [E(data="a")]
    assert d.feed(b"\ndata: b\n\n") == [E(data="b")]  # that LF completed the CRLF, no extra line


def test_cr_then_empty_chunk_then_lf_is_still_one_line_ending() -> None:
    assert decode_chunks([b"data: a\r", b"", b"\ndata: b\n", b"\n"]) == [E(data="a\nb")]


def test_two_crs_then_lf_is_a_blank_line_then_crlf() -> None:
    # "\r" ends "data: a", "\r\n" is the blank line: exactly one event.
    check_all_cuttings(b"data: a\r\r\n", [E(data="a")])


def test_line_separators_other_than_cr_and_lf_do_not_split() -> None:
    odd = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"
    data = ("data: a" + odd + "b\n\n").encode()
    check_all_cuttings(data, [E(data="a" + odd + "b")])


# ---------------------------------------------------------------------------------------------
# Byte order mark


def test_bom_at_very_start_is_stripped() -> None:
    check_all_cuttings(b"\xef\xbb\xbfdata: x\n\n", [E(data="x")])


def test_bom_cut_across_chunks_is_stripped() -> None:
    assert decode_chunks([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == [E(data="x")]
    assert decode_chunks([b"", b"\xef\xbb", b"", b"\xbf", b"data: x\n\n"]) == [E(data="x")]


def test_only_one_bom_is_stripped() -> None:
    # The second BOM makes the field name "\ufeffdata", an unknown field: nothing dispatches.
    check_all_cuttings(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", [])


def test_bom_later_in_the_stream_is_content() -> None:
    check_all_cuttings("data: x\n\n\ufeffdata: y\n\ndata: \ufeffz\n\n".encode(), [E(data="x"), E(data="\ufeffz")])


# ---------------------------------------------------------------------------------------------
# Fields


def test_comment_lines_are_ignored_and_do_not_dispatch() -> None:
    check_all_cuttings(b":hello\ndata: a\n: still\ndata: b\n:\n\n", [E(data="a\nb")])


def test_field_without_colon_has_empty_value() -> None:
    check_all_cuttings(b"data\ndata\n\n", [E(data="\n")])
    check_all_cuttings(b"event\ndata: x\n\n", [E(event="message", data="x")])


def test_only_one_leading_space_is_removed() -> None:
    check_all_cuttings(b"data:   x  \n\n", [E(data="  x  ")])
    check_all_cuttings(b"data:\tx\n\n", [E(data="\tx")])


def test_value_may_contain_colons() -> None:
    check_all_cuttings(b'data: {"a": "b:c"}\n\n', [E(data='{"a": "b:c"}')])


def test_event_field_sets_type_and_is_reset_after_dispatch() -> None:
    check_all_cuttings(b"event: ping\ndata: 1\n\ndata: 2\n\n", [E(event="ping", data="1"), E(data="2")])


def test_event_type_is_reset_even_when_nothing_dispatches() -> None:
    check_all_cuttings(b"event: lost\n\ndata: 2\n\n", [E(data="2")])


def test_last_event_field_wins() -> None:
    check_all_cuttings(b"event: a\nevent: b\ndata: 1\n\n", [E(event="b", data="1")])


def test_unknown_fields_are_ignored() -> None:
    check_all_cuttings(b"foo: bar\ndata : not data\nData: no\ndata: yes\n\n", [E(data="yes")])


def test_empty_data_buffer_dispatches_nothing_not_even_from_a_remembered_id() -> None:
    check_all_cuttings(b"id: 7\n\n\n\nevent: x\n\n", [])
    check_all_cuttings(b"id: 7\n\ndata: later\n\n", [E(data="later", id="7")])


def test_id_persists_across_events_until_changed() -> None:
    check_all_cuttings(
        b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n",
        [E(data="a", id="1"), E(data="b", id="1"), E(data="c", id="2"), E(data="d", id="")],
    )


def test_id_containing_nul_is_ignored() -> None:
    check_all_cuttings(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", [E(data="a", id="1"), E(data="b", id="1")])


def test_id_set_after_data_in_the_same_event_applies_to_it() -> None:
    check_all_cuttings(b"data: a\nid: 9\n\n", [E(data="a", id="9")])


def test_last_event_id_property() -> None:
    d = SSEDecoder()
    assert d.last_event_id is None
    d.feed(b"id: abc\n")
    assert d.last_event_id == "abc"


def test_retry_all_ascii_digits_applies_to_its_event_only() -> None:
    check_all_cuttings(b"retry: 1500\ndata: a\n\ndata: b\n\n", [E(data="a", retry=1500), E(data="b")])


@pytest.mark.parametrize("value", ["", "  10", "10 ", "1.5", "-1", "ten", "\u0661\u0662", "\uff11", "1e3"])
def test_retry_that_is_not_all_ascii_digits_is_ignored(value: str) -> None:
    check_all_cuttings(f"retry: 7\nretry:{value}\ndata: a\n\n".encode(), [E(data="a", retry=7)])


def test_retry_is_reset_at_every_dispatch_even_an_empty_one() -> None:
    check_all_cuttings(b"retry: 5\n\ndata: a\n\n", [E(data="a")])


# ---------------------------------------------------------------------------------------------
# EOF, UTF-8, usage


def test_event_without_blank_line_at_eof_is_discarded() -> None:
    d = SSEDecoder()
    assert d.feed(b"data: a\n\ndata: b\n") == [E(data="a")]
    assert d.close() == []


def test_unterminated_last_line_is_discarded() -> None:
    assert decode_chunks([b"data: a\n\ndata: b"]) == [E(data="a")]
    assert decode_chunks([b"data: a\n\n\r"]) == [E(data="a")]  # lone CR at EOF: a blank line with no event


def test_utf8_characters_cut_anywhere() -> None:
    text = "data: é€😀 añ 中文 \U0001f9ea\n\n"
    data = text.encode()
    expected = [E(data="é€😀 añ 中文 \U0001f9ea")]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert decode_chunks([data[:i], data[i:j], data[j:]]) == expected


def test_invalid_utf8_becomes_replacement_character() -> None:
    check_all_cuttings(b"data: a\xffb\xc3(\n\n", [E(data="a\ufffdb\ufffd(")])


def test_stream_ending_inside_a_character_loses_only_the_unfinished_event() -> None:
    assert decode_chunks([b"data: a\n\ndata: \xe2\x82"]) == [E(data="a")]


def test_feed_after_close_is_a_usage_error() -> None:
    d = SSEDecoder()
    d.close()
    assert d.close() == []
    with pytest.raises(UsageError):
        d.feed(b"data: x\n\n")


def test_empty_feed_returns_nothing() -> None:
    d = SSEDecoder()
    assert d.feed(b"") == []
    assert d.feed(b"data: x\n\n") == [E(data="x")]


def test_server_sent_event_is_frozen_and_keyword_only() -> None:
    ev = E(data="x")
    assert (ev.event, ev.id, ev.retry) == ("message", None, None)
    with pytest.raises(AttributeError):
        ev.data = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ServerSentEvent("message", "x")  # type: ignore[misc]


def test_anthropic_stream_from_wire_md() -> None:
    stream = (
        b"event: message_start\n"
        b'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
        b'"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b"event: ping\n"
        b'data: {"type": "ping"}\n\n'
        b"event: content_block_delta\n"
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"na\\u2028me\\""}}\n\n'
        b"event: message_stop\n"
        b'data: {"type":"message_stop"}\n\n'
    )
    events = decode_chunks([stream])
    assert [e.event for e in events] == ["message_start", "ping", "content_block_delta", "message_stop"]
    assert events[1].data == '{"type": "ping"}'
    check_all_cuttings(stream, events)


def test_long_line_fed_byte_by_byte() -> None:
    payload = "x" * 50_000
    assert decode_chunks(bytewise(f"data: {payload}\n\n".encode())) == [E(data=payload)]


# ---------------------------------------------------------------------------------------------
# Properties: a generated stream decodes to the events it was made from, however it is cut.

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=12,
)
_event = st.fixed_dictionaries(
    {
        "event": st.one_of(st.none(), st.text(alphabet="abcxyz_.", min_size=1, max_size=8)),
        "data": st.lists(_text, min_size=1, max_size=4),
        "id": st.one_of(st.none(), _text.filter(lambda s: "\x00" not in s)),
        "retry": st.one_of(st.none(), st.integers(0, 10**6)),
        "comment": st.booleans(),
    }
)
_eol = st.sampled_from(["\n", "\r\n", "\r"])


_tokens = st.sampled_from(
    [b"data", b"event", b"id", b"retry", b":", b": ", b" ", b"\r", b"\n", b"\r\n", b"1", b"x",
     b"\xef\xbb\xbf", b"\xc3\xa9", b"\xe2\x80\xa8", b"\xf0\x9f\x98\x80", b"\x00", b"\xff"]
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(_tokens, max_size=60), st.data())
def test_property_any_cutting_gives_the_events_of_the_whole(tokens: list[bytes], data: st.DataObject) -> None:
    raw = b"".join(tokens)
    reference = decode_chunks([raw])
    positions = data.draw(st.lists(st.integers(0, len(raw)), max_size=20))
    assert decode_chunks(cut_at(raw, positions)) == reference
    assert decode_chunks(bytewise(raw)) == reference


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(_event, max_size=6), st.lists(_eol, min_size=1, max_size=64), st.data())
def test_property_generated_stream_decodes_to_its_events(specs, eols, data: st.DataObject) -> None:
    parts: list[str] = []
    expected: list[ServerSentEvent] = []
    last_id: str | None = None
    k = 0

    def eol() -> str:
        nonlocal k
        k += 1
        return eols[k % len(eols)]

    for spec in specs:
        lines: list[str] = []
        if spec["comment"]:
            lines.append(":comment")
        if spec["event"] is not None:
            lines.append("event: " + spec["event"])
        if spec["id"] is not None:
            lines.append("id: " + spec["id"])
            last_id = spec["id"]
        if spec["retry"] is not None:
            lines.append(f"retry: {spec['retry']}")
        lines += ["data: " + d for d in spec["data"]]
        lines.append("")  # the blank line
        for line in lines:
            ending = eol()
            # A lone CR ending followed by an empty line ending in LF would read as one CRLF;
            # a real writer never produces that pair, so neither do we.
            if line == "" and parts and parts[-1].endswith("\r") and ending == "\n":
                ending = "\r\n"
            parts.append(line + ending)
        expected.append(
            ServerSentEvent(
                event=spec["event"] or "message", data="\n".join(spec["data"]), id=last_id, retry=spec["retry"]
            )
        )
    raw = "".join(parts).encode()
    positions = data.draw(st.lists(st.integers(0, len(raw)), max_size=20))
    assert decode_chunks([raw]) == expected
    assert decode_chunks(cut_at(raw, positions)) == expected
    assert decode_chunks(cut_at(raw + b"data: tail without blank line\r", positions)) == expected


# --- byte spans ---------------------------------------------------------------------------------

SPAN_STREAM = (
    b"\xef\xbb\xbf: a comment\r\nevent: delta\r\nid: 7\r\ndata: {\"a\": \"caf\xc3\xa9 \xe2\x80\xa8\"}\r\n\r\n"
    b"data:first\ndata\ndata:  two spaces \xf0\x9f\x98\x80\n\n"
    b"event: ping\n\n"  # dispatches nothing: its bytes belong to no event
    b"data: bad \xff utf8\rretry: 5\r\r"
    b"data: last\n\n"
)


def check_spans(data: bytes, events: list[ServerSentEvent]) -> None:
    prev_end = 0
    for ev in events:
        assert prev_end <= ev.start < ev.end <= len(data)
        assert data[ev.end - 1 : ev.end] in (b"\n", b"\r") and data[ev.end : ev.end + 1] in (b"\n", b"\r")
        # the event's bytes hold its data lines, each written contiguously from its offset
        lines = ev.data.split("\n")
        assert len(ev.data_starts) == len(lines)
        for line, at in zip(lines, ev.data_starts):
            assert ev.start <= at <= ev.end
            raw = data[at : data.find(b"\n", at) if b"\n" in data[at:] else len(data)].split(b"\r")[0]
            assert raw.decode("utf-8", "replace") == line
        prev_end = ev.end


@pytest.mark.parametrize("cut", ["whole", "bytewise"])
def test_events_carry_their_byte_spans(cut: str) -> None:
    chunks = whole(SPAN_STREAM) if cut == "whole" else bytewise(SPAN_STREAM)
    events = decode_chunks(chunks)
    assert [e.data for e in events] == ['{"a": "café \u2028"}', "first\n\n two spaces 😀", "bad \ufffd utf8", "last"]
    check_spans(SPAN_STREAM, events)
    first, second, third, fourth = events
    assert first.start == 3  # after the BOM; the comment and event/id lines belong to the event
    assert SPAN_STREAM[first.start : first.end].endswith(b"}\r\n")
    assert first.data_starts[0] == SPAN_STREAM.index(b'{"a"')
    assert second.start == first.end + 2 and second.data_starts[1] == SPAN_STREAM.index(b"data\n") + 4
    assert third.start == SPAN_STREAM.index(b"data: bad")
    assert fourth.start == third.end + 1 and SPAN_STREAM[fourth.start : fourth.end] == b"data: last\n"


def test_a_crlf_cut_between_reads_does_not_move_the_spans() -> None:
    d = SSEDecoder()
    events = d.feed(b"data: x\r\n\r")
    assert [(e.start, e.end) for e in events] == [(0, 9)]
    events = d.feed(b"\ndata: y\n\n")
    assert [(e.start, e.end, e.data_starts) for e in events] == [(11, 19, (17,))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, len(SPAN_STREAM)), max_size=25))
def test_spans_are_the_same_however_the_bytes_are_cut(positions: list[int]) -> None:
    events = decode_chunks(cut_at(SPAN_STREAM, positions))
    want = decode_chunks(whole(SPAN_STREAM))
    assert [(e.start, e.end, e.data_starts) for e in events] == [(e.start, e.end, e.data_starts) for e in want]
    check_spans(SPAN_STREAM, events)
