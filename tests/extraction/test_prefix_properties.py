"""Hypothesis properties of livefill/extraction/prefix.py: whatever the document and however it is cut, the
changes keep every promise livefill/extraction/prefix.py's docstring makes."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livefill.extraction.prefix import IncompleteJSON, JSONPrefixError, PrefixParser
from tests.extraction.test_prefix_support import (
    PENDING,
    PROVISIONAL,
    SETTLED,
    cut,
    feed_checked,
    resolve,
    same,
)

pytestmark = pytest.mark.slow  # long property runs (~10 s); the fast loop has test_prefix*

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Num:
    """A number leaf that remembers the exact text it is written with."""

    def __init__(self, text: str) -> None:
        self.text = text


NUMBER_TEXT = r"-?(0|[1-9][0-9]{0,8})(\.[0-9]{1,5})?([eE][-+]?[0-9]{1,3})?"
numbers = st.from_regex(NUMBER_TEXT, fullmatch=True).map(Num)
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
leaves = st.none() | st.booleans() | numbers | texts
trees = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)
SPACES = ["", "", "", " ", "\n", "\t", "\r\n", "  "]
SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "/": "\\/"}


def _string(s: str, rnd: random.Random) -> str:
    out = ['"']
    for ch in s:
        code = ord(ch)
        must = ch in '"\\' or code < 0x20
        if must or rnd.random() < 0.2:
            if ch in SHORT and rnd.random() < 0.7:
                out.append(SHORT[ch])
            elif code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{code:04x}" if rnd.random() < 0.5 else f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def serialize(tree: Any, rnd: random.Random) -> tuple[str, dict[str, str]]:
    """JSON text for `tree` with random whitespace and escapes, and every number's text by pointer."""
    numbers: dict[str, str] = {}
    out: list[str] = []

    def ws() -> None:
        out.append(rnd.choice(SPACES))

    def emit(node: Any, pointer: str) -> None:
        if isinstance(node, Num):
            numbers[pointer] = node.text
            out.append(node.text)
        elif node is None or isinstance(node, bool):
            out.append(json.dumps(node))
        elif isinstance(node, str):
            out.append(_string(node, rnd))
        elif isinstance(node, list):
            out.append("[")
            for index, item in enumerate(node):
                if index:
                    out.append(",")
                ws()
                emit(item, f"{pointer}/{index}")
                ws()
            out.append("]")
        else:
            out.append("{")
            for index, (key, item) in enumerate(node.items()):
                if index:
                    out.append(",")
                ws()
                out.append(_string(key, rnd))
                ws()
                out.append(":")
                ws()
                emit(item, pointer + "/" + key.replace("~", "~0").replace("/", "~1"))
                ws()
            out.append("}")

    ws()
    emit(tree, "")
    ws()
    return "".join(out), numbers


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    return serialize(draw(trees), draw(st.randoms(use_true_random=False)))


@st.composite
def cut_documents(draw: st.DrawFn) -> tuple[str, dict[str, str], list[str]]:
    text, numbers = draw(documents())
    points = draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))
    if draw(st.booleans()):
        size = draw(st.integers(1, 5))
        points += list(range(size, len(text), size))
    return text, numbers, cut(text, points)


def settled_of(calls: list[list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for changes in calls:
        for change in changes:
            if change.state is SETTLED:
                out[change.pointer] = change.value
    return out


@SETTINGS
@given(cut_documents())
def test_any_cutting_gives_the_same_settled_values_and_value_as_whole_equal_to_json_loads(doc) -> None:
    text, _, pieces = doc
    whole_value, whole_calls = feed_checked(text, [text])  # also checks every per-call promise
    cut_value, cut_calls = feed_checked(text, pieces)
    expected = json.loads(text)
    assert same(whole_value, expected) and same(cut_value, expected)
    whole, parts = settled_of(whole_calls), settled_of(cut_calls)
    assert whole.keys() == parts.keys()
    assert all(same(whole[p], parts[p]) for p in whole)


@SETTINGS
@given(cut_documents())
def test_every_provisional_string_is_a_prefix_of_its_final_value(doc) -> None:
    text, _, pieces = doc
    final = json.loads(text)
    _, calls = feed_checked(text, pieces)
    for changes in calls:
        for change in changes:
            if change.state is PROVISIONAL and type(change.value) is str:
                assert resolve(final, change.pointer).startswith(change.value)


def _complete_prefix_values(text: str) -> list[Any]:
    out = []
    for end in range(1, len(text) + 1):
        try:
            out.append(json.loads(text[:end]))
        except ValueError:
            pass
    return out


@SETTINGS
@given(cut_documents())
def test_every_provisional_number_is_spelled_by_a_prefix_of_the_final_numbers_text(doc) -> None:
    text, numbers, pieces = doc
    _, calls = feed_checked(text, pieces)
    for changes in calls:
        for change in changes:
            if change.state is PROVISIONAL and type(change.value) in (int, float):
                spelled = _complete_prefix_values(numbers[change.pointer])
                assert any(same(change.value, v) for v in spelled), (change, numbers[change.pointer])


@SETTINGS
@given(cut_documents())
def test_value_and_state_agree_with_the_changes_after_every_feed(doc) -> None:
    text, _, pieces = doc
    final = json.loads(text)
    parser = PrefixParser()
    settled: list[str] = []
    for piece in pieces:
        changes = parser.feed(piece)
        for change in changes:
            assert parser.state(change.pointer) is change.state, change
            if change.state is SETTLED:
                settled.append(change.pointer)
            elif change.state is PENDING:
                parent, _, key = change.pointer.rpartition("/")
                snapshot = resolve(parser.value(), parent)
                assert key.replace("~1", "/").replace("~0", "~") not in snapshot  # pending keys are omitted
        snapshot = parser.value()
        for pointer in settled:
            assert same(resolve(snapshot, pointer), resolve(final, pointer))
    parser.close()
    assert same(parser.value(), final)


@st.composite
def duplicate_key_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    rnd = draw(st.randoms(use_true_random=False))
    first, middle, last = draw(trees), draw(trees), draw(trees)
    a, _ = serialize(first, rnd)
    b, _ = serialize(middle, rnd)
    c, _ = serialize(last, rnd)
    text = '{"k": ' + a + ', "m": ' + b + ', "k": ' + c + "}"
    points = draw(st.lists(st.integers(1, len(text) - 1), max_size=10))
    return text, cut(text, points)


@SETTINGS
@given(duplicate_key_documents())
def test_duplicate_keys_last_wins_under_any_cutting(doc) -> None:
    text, pieces = doc
    expected = json.loads(text)
    value, calls = feed_checked(text, pieces)
    assert same(value, expected)
    last_k = [c for changes in calls for c in changes if c.pointer == "/k"][-1]
    assert last_k.state is SETTLED and same(last_k.value, expected["k"])


MUTATIONS = list(',]}[{:"\\ -+.eE0123456789tfnxNI/\'\t\n\x00\x1f\u00a0\ufeff')


@st.composite
def mutated_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    text, _ = draw(documents())
    for _ in range(draw(st.integers(1, 2))):
        position = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "replace", "delete", "truncate"]))
        char = draw(st.sampled_from(MUTATIONS))
        if kind == "insert":
            text = text[:position] + char + text[position:]
        elif kind == "replace":
            text = text[:position] + char + text[position + 1 :]
        elif kind == "delete":
            text = text[:position] + text[position + 1 :]
        else:
            text = text[:position]
    points = draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=10))
    return text, cut(text, points)


def _outcome(pieces: list[str]) -> tuple[str, Any]:
    parser = PrefixParser()
    try:
        for piece in pieces:
            parser.feed(piece)
        parser.close()
    except IncompleteJSON as e:
        return "incomplete", e.offset
    except JSONPrefixError as e:
        return "error", e.offset
    return "ok", parser.value()


@settings(max_examples=300, deadline=None)
@given(mutated_documents())
def test_errors_and_their_offsets_do_not_depend_on_the_cutting(doc) -> None:
    text, pieces = doc
    whole = _outcome([text] if text else [])
    by_char = _outcome(list(text))
    by_cut = _outcome(pieces)
    assert whole[0] == by_char[0] == by_cut[0]
    try:
        expected = json.loads(text)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted == (whole[0] == "ok"), (text, whole)
    if whole[0] == "ok":
        assert same(whole[1], expected) and same(by_char[1], expected) and same(by_cut[1], expected)
        return
    assert whole[1] == by_char[1] == by_cut[1]
    if whole[0] == "incomplete":
        assert whole[1] == len(text)
    else:
        offset = whole[1]
        PrefixParser().feed(text[:offset])  # a viable prefix ...
        assert _outcome([text[: offset + 1]]) == ("error", offset)  # ... that the next character kills
