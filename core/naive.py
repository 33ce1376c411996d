"""The naive client: wrong on purpose, kept so the app can show what it gets wrong.

How this works
--------------
This is what most streaming UIs do: keep the growing buffer, and on every delta "repair" it into
valid JSON — close an open string, drop a dangling key or a half-written literal, close every open
bracket — then parse it and show the result as if it were the answer. It has no notion of a value
being finished: `{"amount": 12` repairs to `{"amount": 12}`, and the UI shows 12 for what will be
1200; `{"customer_name": "Mar` shows "Mar". It re-scans the whole buffer on every delta (quadratic).

`repair(text)` returns the JSON text the buffer repairs to (or None when nothing usable has
arrived); `naive_parse(text)` parses that. `NaiveReader` is the buffer: `feed(delta)` returns the
repaired value of everything so far. None of this knows which values are final; that is the point.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TRAILING_NUMBER_JUNK = re.compile(r"[-+.eE]+$")


_ESCAPE = re.compile(r"\\.", re.DOTALL)
_CLOSED_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = re.compile(r"[^{}\[\]]+")


def _blank_escapes(text: str) -> str:
    """`text` with every escape sequence replaced by two harmless characters (same length)."""
    return _ESCAPE.sub("__", text) if "\\" in text else text


def _scan(text: str) -> tuple[list[str], bool, int]:
    """The open brackets, whether the text ends inside a string, and where that string began.

    All C-speed (`re`, `str` methods): escapes are blanked, closed strings removed, and the
    remaining brackets reduced pair by pair.
    """
    blanked = _blank_escapes(text)
    in_string = blanked.count('"') % 2 == 1
    start = blanked.rfind('"') if in_string else -1
    outside = _CLOSED_STRING.sub("", blanked[:start] if in_string else blanked)
    brackets = _NOT_BRACKET.sub("", outside)
    while True:
        reduced = brackets.replace("{}", "").replace("[]", "")
        if reduced == brackets:
            break
        brackets = reduced
    return [b for b in brackets if b in "{["], in_string, start


def _close_string(text: str) -> str:
    """Close a string the text ends inside, dropping an incomplete escape at its end."""
    m = re.search(r"(\\+)(u[0-9a-fA-F]{0,3})?$", text)
    if m and len(m.group(1)) % 2 == 1:
        text = text[: m.end(1) - 1]
    return text + '"'


def _closers(stack: list[str]) -> str:
    return "".join("}" if b == "{" else "]" for b in reversed(stack))


def repair(text: str) -> str | None:
    """The buffer closed into JSON text the way a naive client does it, or None if nothing parses."""
    body = text.rstrip()
    for _ in range(64):  # each round cuts at least one character; bounded for safety
        if not body.strip():
            return None
        stack, in_string, _start = _scan(body)
        candidate = _close_string(body) if in_string else body
        candidate = _TRAILING_NUMBER_JUNK.sub("", candidate) if candidate[-1:] in "-+.eE" else candidate
        attempt = candidate.rstrip()
        if attempt.endswith(","):
            attempt = attempt[:-1]
        if attempt.endswith(":"):
            attempt = attempt[:-1]
        for tail in (attempt, _drop_dangling_key(attempt, stack)):
            if tail is None:
                continue
            try:
                full = tail + _closers(_scan(tail)[0])
                json.loads(full)
                return full
            except ValueError:
                continue
        # cut back to the last structural character outside a string and try again
        cut = _last_cut(body)
        if cut <= 0:
            return None
        body = body[:cut] if body[cut] in ",:" else body[: cut + 1]
    return None


def _drop_dangling_key(text: str, stack: list[str]) -> str | None:
    """`{"a": 1, "b"` -> `{"a": 1` (a key with no value yet)."""
    if not stack or stack[-1] != "{" or not text.endswith('"'):
        return None
    _stack, inside, start = _scan(text[:-1])  # the text minus its closing quote ends inside the key
    if not inside or start < 0:
        return None
    head = text[:start].rstrip()
    return head[:-1] if head.endswith(",") else head


def _last_cut(text: str) -> int:
    """Index of the last `,` `{` `[` or `:` outside a string, or -1."""
    blanked = _blank_escapes(text)
    end = len(blanked)
    if blanked.count('"') % 2 == 1:
        end = blanked.rfind('"')
    while end > 0:
        pos = max(blanked.rfind(c, 0, end) for c in ",{[:")
        if pos < 0:
            return -1
        if blanked.count('"', 0, pos) % 2 == 0:
            return pos
        end = blanked.rfind('"', 0, pos)  # inside a closed string: continue before it
    return -1


def naive_parse(text: str) -> Any:
    """The value the repaired buffer parses to, or None if nothing usable has arrived."""
    repaired = repair(text)
    return None if repaired is None else json.loads(repaired)


class NaiveReader:
    """The growing buffer; every `feed` re-repairs and re-parses all of it (as naive clients do)."""

    def __init__(self) -> None:
        self._buffer: list[str] = []

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return "".join(self._buffer)

    def feed(self, delta: str) -> Any:
        """Append `delta`; return the repaired value of the whole buffer (None if nothing yet)."""
        self._buffer.append(delta)
        return naive_parse(self.text)
