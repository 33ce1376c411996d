"""A JSON document read and written by JSON Pointer: `get_at` (or MISSING), `set_at`, `delete_at`,
`walk` (every pointer inside a value) and `same_json` (equal JSON, types included)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from livefill.errors import UsageError
from livefill.extraction import pointer as jp

__all__ = ["MISSING", "delete_at", "get_at", "put", "same_json", "set_at", "tokens", "walk"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Returned by `FormModel.value()` for a pointer with no value."""


def tokens(pointer: str) -> list[str]:
    """The reference tokens of `pointer`; UsageError for one that is not a JSON Pointer."""
    try:
        return jp.parse(pointer)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def get_at(doc: Any, pointer: str) -> Any:
    """The value at `pointer` in `doc`, or MISSING."""
    node = doc
    for token in tokens(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                return MISSING
            node = node[int(token)]
        else:
            return MISSING
    return node


def same_json(a: Any, b: Any) -> bool:
    """`a` and `b` are the same JSON, types included (1, 1.0 and true are three values; == would
    call them equal). False when either is missing or not JSON."""
    if a is MISSING or b is MISSING:
        return False
    try:
        return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)
    except (TypeError, ValueError):
        return False


def walk(value: Any, pointer: str) -> Iterable[str]:
    """Every pointer inside `value` (rooted at `pointer`), the value's own pointer first."""
    stack = [(pointer, value)]
    while stack:
        ptr, node = stack.pop()
        yield ptr
        if isinstance(node, dict):
            stack.extend((jp.child(ptr, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{ptr}/{i}", v) for i, v in enumerate(node))


def set_at(doc: Any, pointer: str, value: Any, container: Callable[[str, str], Any]) -> None:
    """Put `value` at `pointer` in `doc`, making missing parents with `container(parent_pointer,
    next_token)` (a dict or a list). UsageError for a pointer the document cannot take."""
    parts = tokens(pointer)
    node = doc
    for i, token in enumerate(parts[:-1]):
        child = get_at(node, jp.child("", token))
        if not isinstance(child, (dict, list)):
            child = container(jp.join(parts[: i + 1]), parts[i + 1])
            put(node, token, child)
        node = child
    put(node, parts[-1], value)


def put(node: Any, token: str, value: Any) -> None:
    """Set `token` of the object or array `node` (an array grows by one at its end at most)."""
    if isinstance(node, dict):
        node[token] = value
        return
    if isinstance(node, list):
        if not token.isdigit():
            raise UsageError(f"array index expected, got {token!r}")
        index = int(token)
        if index < len(node):
            node[index] = value
        elif index == len(node):
            node.append(value)
        else:
            raise UsageError(f"array index {index} skips elements (length {len(node)})")
        return
    raise UsageError(f"cannot set {token!r} inside a {type(node).__name__}")


def delete_at(doc: Any, pointer: str) -> None:
    """Remove the value at `pointer` (an array loses only its last element)."""
    parts = tokens(pointer)
    if not parts:
        return
    parent = get_at(doc, jp.join(parts[:-1]))
    last = parts[-1]
    if isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list) and last.isdigit() and int(last) == len(parent) - 1:
        parent.pop()
