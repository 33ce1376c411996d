"""livefill/wire/ndjson.py: strict NDJSON framing under every way the bytes can be cut."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.errors import ProtocolError, UsageError
from livefill.wire.ndjson import NDJSONFramer


def frame(chunks: list[bytes], max_line_bytes: int = 16384) -> list[str]:
    f = NDJSONFramer(max_line_bytes)
    out: list[str] = []
    for c in chunks:
        out += f.feed(c)
    out += f.close()
    return out


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def cut_at(data: bytes, positions: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *[p for p in positions if 0 <= p <= len(data)]})
    return [data[a:b] for a, b in zip(points, points[1:])]


def all_cuttings(data: bytes) -> list[list[bytes]]:
    return [[data], bytewise(data), *[cut_at(data, list(range(0, len(data), k))) for k in (2, 3, 7)]]


def check(data: bytes, expected: list[str], max_line_bytes: int = 16384) -> None:
    for chunks in all_cuttings(data):
        assert frame(chunks, max_line_bytes) == expected


def check_error(data: bytes, match: str, max_line_bytes: int = 16384) -> None:
    for chunks in all_cuttings(data):
        with pytest.raises(ProtocolError, match=match):
            frame(chunks, max_line_bytes)


# ---------------------------------------------------------------------------------------------
# Framing


def test_lf_ends_a_line() -> None:
    check(b'{"a":1}\n{"b":2}\n', ['{"a":1}', '{"b":2}'])


def test_crlf_is_accepted_as_a_line_ending() -> None:
    check(b'{"a":1}\r\n{"b":2}\n{"c":3}\r\n', ['{"a":1}', '{"b":2}', '{"c":3}'])


def test_crlf_cut_between_cr_and_lf() -> None:
    assert frame([b'{"a":1}\r', b'\n{"b":2}\r', b"\n"]) == ['{"a":1}', '{"b":2}']


def test_lone_cr_inside_a_line_is_content() -> None:
    check(b'{"a":\r1}\n', ['{"a":\r1}'])


def test_records_are_returned_verbatim() -> None:
    check(b'  {"a": 1 }\t\n[1, 2]\n"s"\n', ['  {"a": 1 }\t', "[1, 2]", '"s"'])


def test_last_record_without_newline_is_returned_by_close() -> None:
    f = NDJSONFramer()
    assert f.feed(b'{"a":1}\n{"b"') == ['{"a":1}']
    assert f.feed(b":2}") == []
    assert f.close() == ['{"b":2}']
    check(b'{"a":1}\n{"b":2}', ['{"a":1}', '{"b":2}'])


def test_only_lf_splits_lines_not_u2028_or_other_separators() -> None:
    odd = "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"
    line = json.dumps({"t": "a" + odd + "b"}, ensure_ascii=False)
    check((line + "\n").encode(), [line])
    assert json.loads(frame([(line + "\n").encode()])[0]) == {"t": "a" + odd + "b"}


def test_utf8_characters_cut_anywhere() -> None:
    line = '{"t":"é€😀 中文"}'
    data = (line + "\n" + line).encode()
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert frame([data[:i], data[i:j], data[j:]]) == [line, line]


def test_empty_stream_has_no_records() -> None:
    assert frame([]) == []
    assert frame([b"", b""]) == []


def test_ollama_stream_from_wire_md() -> None:
    stream = (
        b'{"model":"llama3.2","created_at":"2025-07-07T20:22:19.1Z","message":{"role":"assistant","content":"{\\"cust"},"done":false}\n'
        b'{"model":"llama3.2","created_at":"2025-07-07T20:22:19.3Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":184}\n'
    )
    lines = frame([stream])
    assert [json.loads(x)["done"] for x in lines] == [False, True]
    check(stream, lines)


# ---------------------------------------------------------------------------------------------
# Breaches


@pytest.mark.parametrize(
    "data",
    [b"\n", b"\r\n", b'{"a":1}\n\n{"b":2}\n', b" \n", b"\t\n", b" \t \r\n", b'{"a":1}\n   '],
    ids=["lf", "crlf", "between", "space", "tab", "mixed-ws", "ws-at-eof"],
)
def test_blank_or_whitespace_only_line_is_a_protocol_error(data: bytes) -> None:
    check_error(data, "blank")


def test_non_json_whitespace_is_not_blank() -> None:
    # \x0b and U+00A0 are not JSON whitespace: the line is framed (the JSON parser will reject it).
    check("\x0b\n\u00a0\n".encode(), ["\x0b", "\u00a0"])


def test_line_of_exactly_max_bytes_is_accepted() -> None:
    check(b"x" * 64 + b"\n" + b"y" * 64 + b"\r\n" + b"z" * 64, ["x" * 64, "y" * 64, "z" * 64], max_line_bytes=64)


def test_multibyte_line_counts_bytes_not_characters() -> None:
    check("é".encode() * 32 + b"\n", ["é" * 32], max_line_bytes=64)
    check_error("é".encode() * 32 + b"x\n", "longer than 64", max_line_bytes=64)


@pytest.mark.parametrize("tail", [b"", b"\n", b"\r\n", b"\r"], ids=["eof", "lf", "crlf", "cr-eof"])
def test_line_over_max_bytes_is_a_protocol_error(tail: bytes) -> None:
    check_error(b"x" * 65 + tail, "longer than 64", max_line_bytes=64)


def test_cr_at_the_ceiling_followed_by_more_content_is_over_the_ceiling() -> None:
    check_error(b"x" * 64 + b"\rx\n", "longer than 64", max_line_bytes=64)
    check_error(b"x" * 64 + b"\r", "longer than 64", max_line_bytes=64)  # at EOF that CR is content


def test_oversize_detected_while_still_arriving_never_buffering_past_the_ceiling() -> None:
    limit = 100
    f = NDJSONFramer(limit)
    fed = 0
    with pytest.raises(ProtocolError, match="longer than"):
        for _ in range(10 * limit):  # no newline ever comes
            f.feed(b"x")
            fed += 1
    assert fed == limit  # the (limit+1)-th byte raised, before any newline
    # a trailing CR may be half of CRLF, so it alone is held one byte past the ceiling
    f = NDJSONFramer(limit)
    f.feed(b"x" * limit + b"\r")
    with pytest.raises(ProtocolError):
        f.feed(b"x")


def test_oversize_in_one_huge_read_raises_from_that_read() -> None:
    f = NDJSONFramer(1000)
    assert f.feed(b'{"a":1}\n') == ['{"a":1}']
    with pytest.raises(ProtocolError, match="line 2 is longer than 1000"):
        f.feed(b"y" * 1_000_000)


def test_default_ceiling_is_16384_bytes() -> None:
    assert frame([b"x" * 16384 + b"\n"]) == ["x" * 16384]
    with pytest.raises(ProtocolError):
        frame([b"x" * 16385 + b"\n"])


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xc3(", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"],
    ids=["ff", "bad-continuation", "overlong", "surrogate", "above-max", "lone-continuation"],
)
def test_invalid_utf8_is_a_protocol_error(bad: bytes) -> None:
    check_error(b'{"a":1}\n{"t":"' + bad + b'"}\n', "not valid UTF-8")


def test_invalid_utf8_is_reported_by_the_feed_that_delivers_it() -> None:
    f = NDJSONFramer()
    f.feed(b'{"t":"ab')
    with pytest.raises(ProtocolError):
        f.feed(b"\xff")


def test_line_ending_inside_a_multibyte_character_is_a_protocol_error() -> None:
    check_error(b'{"t":"\xe2\x82\n', "line ended inside a multibyte")


def test_eof_inside_a_multibyte_character_is_a_protocol_error() -> None:
    check_error(b'{"a":1}\n{"t":"\xe2\x82', "stream ended inside a multibyte")
    f = NDJSONFramer()
    assert f.feed(b'{"a":1}\n\xf0\x9f\x98') == ['{"a":1}']
    with pytest.raises(ProtocolError):
        f.close()


def test_framer_is_dead_after_an_error_and_after_close() -> None:
    f = NDJSONFramer()
    with pytest.raises(ProtocolError):
        f.feed(b"\n")
    with pytest.raises(UsageError):
        f.feed(b"{}\n")
    g = NDJSONFramer()
    g.close()
    with pytest.raises(UsageError):
        g.feed(b"{}\n")
    with pytest.raises(UsageError):
        NDJSONFramer(0)


# ---------------------------------------------------------------------------------------------
# Properties

_record = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), min_size=1, max_size=30
).filter(lambda s: s.strip(" \t") != "")


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(_record, max_size=8), st.lists(st.sampled_from(["\n", "\r\n"]), min_size=1), st.booleans(), st.data())
def test_property_any_cutting_frames_the_same_records(records, eols, last_unterminated, data) -> None:
    text = "".join(r + eols[i % len(eols)] for i, r in enumerate(records))
    if last_unterminated and records:
        text = text[: -len(eols[(len(records) - 1) % len(eols)])]
    raw = text.encode()
    positions = data.draw(st.lists(st.integers(0, len(raw)), max_size=20))
    assert frame([raw]) == records
    assert frame(cut_at(raw, positions)) == records


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(_record, min_size=1, max_size=6), st.sampled_from([b"\xff", b"\n\n", b"\xe2\x82\n", b" \r\n"]), st.data())
def test_property_a_breach_raises_under_any_cutting_after_a_prefix_of_the_records(records, bad, data) -> None:
    raw = "".join(r + "\n" for r in records).encode() + bad + b'{"more":1}\n'
    positions = data.draw(st.lists(st.integers(0, len(raw)), max_size=20))
    f = NDJSONFramer()
    got: list[str] = []
    with pytest.raises(ProtocolError):
        for chunk in cut_at(raw, positions):
            got += f.feed(chunk)
        got += f.close()
    assert got == records[: len(got)]


# --- byte spans ---------------------------------------------------------------------------------

SPAN_BODY = '{"a": "café"}\r\n{"b": "\u2028 😀"}\n{"c": 3}'.encode()


def _lines_of(chunks: list[bytes]) -> list:
    f = NDJSONFramer()
    out = []
    for c in chunks:
        out += f.feed(c)
    return out + f.close()


def _check_line_spans(lines: list) -> None:
    assert [str(x) for x in lines] == ['{"a": "café"}', '{"b": "\u2028 😀"}', '{"c": 3}']
    for line in lines:
        assert SPAN_BODY[line.start : line.end].decode() == line  # the terminator is not in the span
    assert [(x.start, x.end) for x in lines] == [(0, 14), (16, 33), (34, 42)]


def test_lines_carry_their_byte_spans_whole_and_byte_by_byte() -> None:
    _check_line_spans(_lines_of([SPAN_BODY]))
    _check_line_spans(_lines_of([SPAN_BODY[i : i + 1] for i in range(len(SPAN_BODY))]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, len(SPAN_BODY)), max_size=20))
def test_line_spans_are_the_same_however_the_bytes_are_cut(positions: list[int]) -> None:
    points = sorted({0, len(SPAN_BODY), *positions})
    _check_line_spans(_lines_of([SPAN_BODY[a:b] for a, b in zip(points, points[1:])]))


def test_a_line_is_an_immutable_str() -> None:
    (line,) = _lines_of([b'{"x": 1}\n'])
    assert line == '{"x": 1}' and isinstance(line, str) and hash(line) == hash('{"x": 1}')
    with pytest.raises(AttributeError):
        line.start = 3  # type: ignore[misc]
