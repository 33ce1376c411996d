"""The naive client: wrong on purpose, kept so the app can show what it gets wrong.

How this works
--------------
This is what most streaming UIs do: keep the growing buffer, and on every delta "repair" it into
valid JSON — close an open string, drop a dangling key or a half-written literal, close every open
bracket — then parse it and show the result as if it were the answer. It has no notion of a value
being finished: `{"amount": 12` repairs to `{"amount": 12}`, and the UI shows 12 for what will be
1200; `{"customer_name": "Mar` shows "Mar". It re-parses the whole buffer on every delta
(`json.loads` of everything so far: quadratic, like the clients it imitates).

`repair(text)` returns the JSON text the buffer repairs to (or None when nothing usable has
arrived); `naive_parse(text)` parses that. `NaiveReader` is the buffer: `feed(delta)` returns the
repaired value of everything so far (`append` + `value` for a caller that parses less often than
it receives). None of this knows which values are final; that is the point.

Finding what is open (the brackets, whether the text ends inside a string and where that string
began) is a scan of the text. Every text `repair` scans is a prefix of its input, possibly with a
closing quote added, so a `_Scanner` keeps the scan state at checkpoints along the input and
resumes from the nearest one; `NaiveReader` keeps one scanner for its growing buffer, so each
delta costs a scan of the new characters only (plus the `json.loads`). The scan pairs every
backslash with the character after it and every quote with the next one, as `json` reads them.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any

from livefill.defaults import MAX_NESTING

_ESCAPE = re.compile(r"\\.", re.DOTALL)
_OUTSIDE = re.compile(r'["{}\[\]\\]')  # what changes the scan state outside a string
_INSIDE = re.compile(r'["\\]')  # ... and inside one
_CHECKPOINT_EVERY = 512  # characters between two kept scan states


class _ScanState:
    """The scan of a text so far: the brackets not yet reduced (openers and stray closers), whether
    it ends inside a string and where that string's quote is, whether a backslash awaits its pair."""

    __slots__ = ("stack", "in_string", "start", "escape")

    def __init__(self, stack: list[str] | None = None, in_string: bool = False, start: int = -1, escape: bool = False) -> None:
        self.stack = stack if stack is not None else []
        self.in_string = in_string
        self.start = start
        self.escape = escape

    def copy(self) -> _ScanState:
        return _ScanState(list(self.stack), self.in_string, self.start, self.escape)

    def advance(self, text: str, i: int, end: int, offset: int = 0) -> _ScanState:
        """Scan `text[i:end]` (positions reported as `offset` + index); returns self."""
        stack = self.stack
        if self.escape and i < end:
            self.escape = False
            i += 1
        search_in, search_out = _INSIDE.search, _OUTSIDE.search
        while i < end:
            m = search_in(text, i, end) if self.in_string else search_out(text, i, end)
            if m is None:
                break
            j = m.start()
            c = text[j]
            if c == "\\":
                if j + 1 < end:
                    i = j + 2
                    continue
                self.escape = True
                break
            if c == '"':
                if self.in_string:
                    self.in_string = False
                else:
                    self.in_string = True
                    self.start = offset + j
            elif c == "{" or c == "[":
                stack.append(c)
            else:
                opener = "{" if c == "}" else "["
                if stack and stack[-1] == opener:
                    stack.pop()
                else:
                    stack.append(c)
            i = j + 1
        return self

    def result(self) -> tuple[list[str], bool, int]:
        return [b for b in self.stack if b in "{["], self.in_string, (self.start if self.in_string else -1)


class _Scanner:
    """Scan states of the prefixes of one growing text, kept every `_CHECKPOINT_EVERY` characters."""

    __slots__ = ("text", "_marks", "_states")

    def __init__(self, text: str = "") -> None:
        self.text = text
        self._marks = [0]
        self._states = [_ScanState()]

    def grow(self, text: str) -> None:
        """The text is now `text` (the old text plus what was appended)."""
        self.text = text

    def scan(self, k: int, extra: str = "") -> tuple[list[str], bool, int]:
        """What `_scan(text[:k] + extra)` returns, resumed from the last checkpoint at or before k."""
        marks = self._marks
        n = bisect_right(marks, k) - 1
        at = marks[n]
        state = self._states[n].copy()
        text = self.text
        while k - at >= _CHECKPOINT_EVERY and n == len(marks) - 1:
            nxt = at + _CHECKPOINT_EVERY
            state.advance(text, at, nxt)
            at = nxt
            marks.append(at)
            self._states.append(state.copy())
            n += 1
        state.advance(text, at, k)
        if extra:
            state.advance(extra, 0, len(extra), offset=k)
        return state.result()


def _blank_escapes(text: str) -> str:
    """`text` with every escape sequence replaced by two harmless characters (same length)."""
    return _ESCAPE.sub("__", text) if "\\" in text else text


def _scan(text: str) -> tuple[list[str], bool, int]:
    """The open brackets, whether the text ends inside a string, and where that string began."""
    return _ScanState().advance(text, 0, len(text)).result()


_OPEN_ESCAPE = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?$")


def _string_end(body: str) -> int:
    """Where a string the text ends inside is cut before its closing quote is added: before an
    incomplete escape at its end (a lone backslash, `\\u` with fewer than four hex digits)."""
    window = 64
    while True:
        start = max(0, len(body) - window)
        m = _OPEN_ESCAPE.search(body, start)  # only the end can match: look at the end only
        if m is None:
            return len(body)
        if m.start() > start or start == 0:
            return m.end(1) - 1 if len(m.group(1)) % 2 == 1 else len(body)
        window *= 8  # a run of backslashes reaching past the window: look further back


def _too_deep(value: Any) -> bool:
    """More than MAX_NESTING containers open at once somewhere in `value` (walked without recursion)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        for child in children:
            if type(child) in (dict, list):
                if depth >= MAX_NESTING:
                    return True
                todo.append((child, depth + 1))
    return False


def _closers(stack: list[str]) -> str:
    return "".join("}" if b == "{" else "]" for b in reversed(stack))


def repair(text: str) -> str | None:
    """The buffer closed into JSON text the way a naive client does it, or None if nothing parses."""
    repaired = _repair(text, _Scanner(text))
    return None if repaired is None else repaired[0]


def _repair(text: str, scanner: _Scanner) -> tuple[str, Any] | None:
    """(the repaired JSON text, its value) or None. Every text scanned here is `text[:k]`, or that
    with a closing quote added (`extra`), so `scanner` (which scans `text`) can resume."""
    k = len(text.rstrip())
    for _ in range(64):  # each round cuts at least one character; bounded for safety
        body = text[:k]
        if not body.strip():
            return None
        stack, in_string, _start = scanner.scan(k)
        if len(stack) > MAX_NESTING:  # deeper than any run takes: not worth a repair (or a RecursionError)
            return None
        if in_string:  # close the string: text[:a] + '"'
            a, extra = _string_end(body), '"'
            attempt = text[:a] + extra
        else:
            a, extra = k, ""
            if body[-1:] in "-+.eE":
                a = len(body.rstrip("-+.eE"))
            attempt = text[:a].rstrip()
            if attempt.endswith(","):
                attempt = attempt[:-1]
            if attempt.endswith(":"):
                attempt = attempt[:-1]
            a = len(attempt)
        tails: list[tuple[str, int, str]] = [(attempt, a, extra)]
        dangling = _drop_dangling_key(text, attempt, a, extra, stack, scanner)
        if dangling is not None:
            tails.append((text[:dangling], dangling, ""))
        for tail, tk, tx in tails:
            full = tail + _closers(scanner.scan(tk, tx)[0])
            try:
                value = json.loads(full)
            except (ValueError, RecursionError):  # RecursionError: nested deeper than json takes
                continue
            return None if _too_deep(value) else (full, value)
        # cut back to the last structural character outside a string and try again
        cut = _last_cut(body)
        if cut <= 0:
            return None
        k = cut if body[cut] in ",:" else cut + 1
    return None


def _drop_dangling_key(
    text: str, attempt: str, a: int, extra: str, stack: list[str], scanner: _Scanner
) -> int | None:
    """`{"a": 1, "b"` -> `{"a": 1` (a key with no value yet): the length of what is kept, or None.
    `attempt` is `text[:a] + extra`."""
    if not stack or stack[-1] != "{" or not attempt.endswith('"'):
        return None
    # the attempt minus its closing quote ends inside the key
    _stack, inside, start = scanner.scan(a if extra else a - 1)
    if not inside or start < 0:
        return None
    head = text[:start].rstrip()
    return len(head) - 1 if head.endswith(",") else len(head)


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
    repaired = _repair(text, _Scanner(text))
    return None if repaired is None else repaired[1]


class NaiveReader:
    """The growing buffer; every `feed` re-repairs and re-parses all of it (as naive clients do)."""

    def __init__(self) -> None:
        self._buffer: list[str] = []
        self._scanner = _Scanner()

    @property
    def text(self) -> str:
        """Everything fed so far."""
        if len(self._buffer) > 1:
            self._buffer = ["".join(self._buffer)]
        return self._buffer[0] if self._buffer else ""

    def feed(self, delta: str) -> Any:
        """Append `delta`; return the repaired value of the whole buffer (None if nothing yet)."""
        self.append(delta)
        return self.value()

    def append(self, delta: str) -> None:
        """Append `delta` without parsing (a caller that parses at most once a frame)."""
        self._buffer.append(delta)

    def value(self) -> Any:
        """The repaired value of the whole buffer now (None if nothing usable yet)."""
        text = self.text
        self._scanner.grow(text)
        repaired = _repair(text, self._scanner)
        return None if repaired is None else repaired[1]
