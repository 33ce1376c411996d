"""livefill/extraction/prefix.py: every change carries the character span of its value in the whole text, the
same however the text is cut (whole, character by character, random cuts)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given

from livefill.extraction.prefix import Change, PrefixParser, ValueState
from tests.extraction.test_prefix_properties import SETTINGS, cut_documents

TRICKY = (
    '{"name": "Lucía \\"Lu\\" Martínez", "note": "a<b \u2028 end \\u00e9\\ud83d\\ude00", "n": -12.5e3,'
    ' "ok": true, "nothing": null, "tags": ["x", "y/z", "😀"], "a~b/c": {"deep": [1, [2, {}], []]},'
    ' "empty": "", "z": 0}'
)


def feed_all(pieces: list[str]) -> list[tuple[int, Change]]:
    """Every change with the number of characters fed when it was reported."""
    parser = PrefixParser()
    out, fed = [], 0
    for piece in pieces:
        fed += len(piece)
        out += [(fed, c) for c in parser.feed(piece)]
    out += [(fed, c) for c in parser.close()]
    return out


def check_spans(text: str, pieces: list[str]) -> dict[str, tuple[int, int]]:
    settled: dict[str, tuple[int, int]] = {}
    for fed, change in feed_all(pieces):
        span = change.span
        if change.state is ValueState.PENDING:
            assert span is None
            continue
        start, end = span
        assert 0 <= start < end <= fed
        if change.state is ValueState.SETTLED:
            assert json.loads(text[start:end]) == change.value, change.pointer
            settled[change.pointer] = span
        else:
            # a provisional value: its first character, up to what has been fed
            assert text[start] in '"{[-0123456789tfn'
            assert end == fed or text[start] in "{["
    return settled


@pytest.mark.parametrize("cutting", ["whole", "chars", "random"])
def test_spans_of_the_tricky_document(cutting: str) -> None:
    if cutting == "whole":
        pieces = [TRICKY]
    elif cutting == "chars":
        pieces = list(TRICKY)
    else:
        rnd = random.Random(5)
        pieces, i = [], 0
        while i < len(TRICKY):
            k = rnd.randint(1, 9)
            pieces.append(TRICKY[i : i + k])
            i += k
    spans = check_spans(TRICKY, pieces)
    assert spans == check_spans(TRICKY, [TRICKY])
    assert TRICKY[slice(*spans["/name"])] == '"Lucía \\"Lu\\" Martínez"'
    assert TRICKY[slice(*spans["/n"])] == "-12.5e3"  # a number ends before its delimiter
    assert TRICKY[slice(*spans["/a~0b~1c/deep/1"])] == "[2, {}]"
    assert spans[""] == (0, len(TRICKY))


def test_a_top_level_number_settles_at_close_with_its_span() -> None:
    parser = PrefixParser()
    assert [c.span for c in parser.feed(" 12")] == [(1, 3)]
    assert [c.span for c in parser.feed("5")] == [(1, 4)]
    assert [(c.state, c.span) for c in parser.close()] == [(ValueState.SETTLED, (1, 4))]


def test_a_change_made_by_hand_has_no_span_and_spans_do_not_take_part_in_equality() -> None:
    made = Change("/a", ValueState.SETTLED, 1)
    assert made.span is None
    (parsed,) = [c for c in PrefixParser().feed('{"a": 1}') if c.pointer == "/a"]
    assert parsed == made and parsed.span == (6, 7)


@SETTINGS
@given(cut_documents())
def test_any_cutting_gives_the_same_spans_as_the_whole_text(doc) -> None:
    text, _, pieces = doc
    assert check_spans(text, pieces) == check_spans(text, [text])
