"""Shared checks for the prefix parser tests: feed a text cut a given way and verify every
promise a change stream makes (see livefill/extraction/prefix.py). Imported by the other test_prefix_* modules."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from livefill.extraction.prefix import Change, PrefixParser, ValueState

PENDING, PROVISIONAL, SETTLED = ValueState.PENDING, ValueState.PROVISIONAL, ValueState.SETTLED


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values *and* types (1, 1.0 and True differ), dict order included. Iterative."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if type(x) is dict:
            if list(x) != list(y):
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif type(x) is list:
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif type(x) is float:
            if not (x == y or (math.isnan(x) and math.isnan(y))):
                return False
        elif x != y:
            return False
    return True


def tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    assert pointer.startswith("/"), pointer
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def resolve(doc: Any, pointer: str) -> Any:
    for token in tokens(pointer):
        doc = doc[int(token)] if type(doc) is list else doc[token]
    return doc


def is_ancestor(a: str, b: str) -> bool:
    return b.startswith(a + "/") or (a == "" and b != "")


def has_duplicate_keys(text: str) -> bool:
    found = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        if len({k for k, _ in pairs}) != len(pairs):
            found = True
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return found


def cut(text: str, points: Iterable[int]) -> list[str]:
    edges = [0, *sorted(set(p for p in points if 0 < p < len(text))), len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:])]


def feed_checked(text: str, pieces: list[str]) -> tuple[Any, list[list[Change]]]:
    """Feed `pieces` (which must join to `text`, a valid document) and close; check the stream.

    Returns (parser.value(), the change lists of every call, close() last)."""
    assert "".join(pieces) == text
    final = json.loads(text)
    dups = has_duplicate_keys(text)
    parser = PrefixParser()
    calls = [parser.feed(piece) for piece in pieces]
    calls.append(parser.close())
    settled: dict[str, Any] = {}
    for changes in calls:
        pointers = [c.pointer for c in changes]
        assert len(pointers) == len(set(pointers)), f"two changes for one pointer in one call: {changes}"
        for index, change in enumerate(changes):
            assert isinstance(change.state, ValueState)
            if change.state is PENDING:
                assert change.value is None
            if not dups:
                assert change.pointer not in settled, f"change after SETTLED: {change}"
            if change.state is SETTLED:
                settled[change.pointer] = change.value
                if not dups:
                    assert same(change.value, resolve(final, change.pointer)), change
            elif change.state is PROVISIONAL and not dups:
                target = resolve(final, change.pointer)
                if type(change.value) is str:
                    assert type(target) is str and target.startswith(change.value), (change, target)
                elif type(change.value) in (dict, list):
                    assert change.value == type(change.value)() and type(target) is type(change.value), change
                else:
                    assert type(change.value) in (int, float) and type(target) in (int, float), change
            # a container that opened in this call comes before its descendants' changes
            if change.state is PROVISIONAL and type(change.value) in (dict, list):
                assert not any(is_ancestor(change.pointer, p) for p in pointers[:index]), changes
    assert same(parser.value(), final)
    # the last SETTLED value of every pointer is json.loads' value there
    for pointer, value in settled.items():
        if not dups:
            assert same(value, resolve(final, pointer)), pointer
    assert "" in settled, "the root never settled"
    assert same(settled[""], final)
    return parser.value(), calls


def test_same_tells_types_apart() -> None:
    assert same({"a": [1, 2.0, True]}, {"a": [1, 2.0, True]})
    assert not same(1, 1.0) and not same(1, True) and not same(0, False)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_resolve_follows_rfc6901_escapes() -> None:
    doc = {"a/b": {"c~d": [10, 20]}}
    assert resolve(doc, "/a~1b/c~0d/1") == 20
    assert resolve(doc, "") is doc
