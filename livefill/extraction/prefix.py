"""The JSON prefix parser: feed it a JSON document in pieces, learn what has settled.

    parser = PrefixParser()
    for delta in deltas:
        for change in parser.feed(delta):
            ...   # change.pointer, change.state (PENDING / PROVISIONAL / SETTLED), change.value
    parser.close()          # IncompleteJSON if the document never completed
    parser.value()          # == json.loads(whole text)

A value is SETTLED in the very `feed` call that delivers its terminating character (a string's
closing quote; for a number the delimiter after it, or `close()` at top level; a literal's last
letter; a container's closing bracket), and its settled value is exactly what `json.loads` gives
for that pointer. Until then it is PROVISIONAL (only what was received, never invented) or
PENDING (its key and colon arrived, no reportable byte of its value yet). The grammar is strict
RFC 8259; the first impossible character raises `JSONPrefixError` with its offset in the whole
text, the same however the text was cut.
"""

# How this works
# ==============
#
# One flat loop over the text drives a small state machine (`_TRANSITIONS`, below): in a
# structural state (expecting a value, a key, a colon, a comma or a closing bracket) the next
# non-whitespace character picks an action from the table; in a token state (inside a string,
# key, number or literal) a regular expression or `str.startswith` consumes as much of the token
# as the text holds, at C speed. Nothing is recursive: open containers live on an explicit stack
# of frames, one small list per level (parent frame, token in parent, pointer, the container's
# Python object, current key, where its PROVISIONAL change sits in this call's list).
#
# Values are built as they arrive: a container's dict or list is created when it opens and
# inserted into its parent at once; each child is inserted into it as it settles. A container's
# SETTLED value is therefore ready the moment its closing bracket arrives, without re-walking
# anything, and `value()` only copies the (few) containers that are still open.
#
# Carry-over between calls: an unfinished string keeps its decoded text so far (`_sval`); what
# cannot be decoded yet (a lone backslash, half a `\uXXXX`, a high surrogate waiting for its
# partner) and an unfinished number or literal are kept as raw text (`_carry`) and prepended to
# the next piece, so nothing is ever scanned twice except that short tail. Error offsets count
# from `consumed`, the number of characters fed.
#
# The machine is a generator (`_machine`); `feed` hands each piece to its `send`. The state between
# calls lives in the generator's locals, so a call of a few characters neither reads it from the
# parser nor writes it back (at 4-character deltas that was a fifth of the time). The inspecting
# methods (`value`, `state`, `close`, pickling) first ask the machine for its state (`_sync`: it
# copies its locals into the parser's box). An exception leaves the state in the box too and tells
# the parser through a weak reference (the parser owns the generator; the generator must not own
# the parser): a wrong argument type starts a new machine from the same state, anything else
# leaves the parser failed, its `_send` a refusal (so does `close()`). `feed` stays a method, not
# the bare `send`, so that a reference to it kept by a caller refuses after `close()` or an error
# like the parser does (a dead generator would raise StopIteration). Module constants and helpers
# are bound as the generator's locals once. The parser is not thread-safe (two threads at once
# make the generator raise ValueError). Most pieces of a real stream fall wholly inside a string's
# body; the machine answers those before setting up the general loop (a call number for `_F_CALL`
# is drawn only when a container opens).
#
# Pointers: a frame knows its pointer string while that is short (up to `_CACHE_POINTERS_UP_TO`
# characters), so a child's pointer is one concatenation. Deeper down, frames store None and a
# change records only *where* its value is -- a frame, or `(frame, token)` -- leaving its
# `pointer` slot empty; such a change is a `_DeepChange` (a Change subclass that compares,
# hashes and prints as one) whose `__getattr__` builds the string on first read. Ordinary
# changes have no `__getattr__`, so reading their attributes stays a plain slot read. Memory stays
# O(depth) even for 100,000 nested brackets, where a pointer string per level (or per change)
# would need gigabytes. Changes are built as `_Twin` objects (same slots, no frozen guard) whose
# class is then switched to Change: the cheapest way CPython offers to fill a frozen dataclass.
#
# One change per pointer per call: a scalar reports only at the end of the call (PROVISIONAL or
# PENDING, if it is still unfinished) or when it settles; a container reports PROVISIONAL when it
# opens and, if it closes in the same call, its SETTLED change replaces that entry in place (so
# a container that opens in a call comes before its children in that call's list). A duplicate
# key drops, at the end of the call, the entries this call made for the value it replaces.
#
# Spans: every change carries where its value lies in the whole text (`Change.span`). A value's
# start is taken when its first character is met (`_vstart` for the scalar being read, `_F_START`
# for a container); its end is the offset just past its last character so far -- the closing
# quote, bracket or literal letter once SETTLED (a number ends before the delimiter that settled
# it), the text fed so far while PROVISIONAL. Two slot writes per change, no extra scanning.

from __future__ import annotations

import math
import re
import sys
import weakref
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from livefill.errors import ProtocolError, UsageError
from livefill.extraction.pointer import escape as _escape_pointer_token
from livefill.extraction.pointer import parse as _pointer_tokens

__all__ = ["Change", "IncompleteJSON", "JSONPrefixError", "PrefixParser", "ValueState"]


class ValueState(Enum):
    """How much of a value has arrived."""

    PENDING = "pending"  # its key and colon arrived; no reportable byte of its value yet
    PROVISIONAL = "provisional"  # part of it arrived; the value so far holds only what was received
    SETTLED = "settled"  # its terminating character arrived; the value is json.loads' for it


class _Twin:
    """Change's slots, without its frozen __setattr__: the parser fills a _Twin and turns it into a
    Change (or a _DeepChange) by assigning __class__, twice as fast as going around the frozen
    guard. Change adds no slots of its own, so CPython finds the two layouts the same at once."""

    __slots__ = ("pointer", "state", "value", "_where", "_start", "_end")


@dataclass(frozen=True)
class Change(_Twin):
    """One pointer's new state after a `feed` / `close` call.

    `pointer` is an RFC 6901 JSON Pointer (`""` is the root). `value` is None while PENDING, the
    value so far while PROVISIONAL (an opened container reports an empty `{}` / `[]`; its children
    report themselves), and exactly `json.loads`' value for that pointer once SETTLED. Treat
    settled container values as read-only: they are the parser's own objects.
    """

    __slots__ = ()  # _Twin's
    pointer: str
    state: ValueState
    value: Any

    def __reduce__(self) -> Any:
        return (Change, (self.pointer, self.state, self.value))

    @property
    def span(self) -> tuple[int, int] | None:
        """[start, end) of the value in the whole text fed to the parser: from its first character
        to just past its last character so far (a settled number ends before its delimiter).
        None while PENDING, and for a Change made by hand. Not part of equality."""
        try:
            start = self._start
        except AttributeError:
            return None
        return None if start is None else (start, self._end)


class _DeepChange(Change):
    """A Change whose pointer is long: the parser leaves its `pointer` slot empty and records
    only where the value is (`_where`); the string is built on first read. A subclass so that
    ordinary changes keep plain slot reads (a `__getattr__` on Change itself would slow down
    every attribute read of every change). Compares, hashes and prints as a Change."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # Only reached when the `pointer` slot is empty (see "Pointers" at the top).
        if name == "pointer":
            pointer = _pointer_of(_get_where(self, Change))
            _set_pointer(self, pointer)
            return pointer
        raise AttributeError(f"'Change' object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Change):
            return (self.pointer, self.state, self.value) == (other.pointer, other.state, other.value)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.pointer, self.state, self.value))

    def __repr__(self) -> str:
        return f"Change(pointer={self.pointer!r}, state={self.state!r}, value={self.value!r})"


_get_where = Change._where.__get__  # type: ignore[attr-defined]
_set_pointer = Change.pointer.__set__  # type: ignore[attr-defined]


def _change(where: Any, state: ValueState, value: Any, start: int | None = None, end: int | None = None) -> Change:
    change = _Twin()
    if type(where) is str:
        change.pointer = where
    else:
        change._where = where
    change.state = state
    change.value = value
    change._start = start
    change._end = end
    change.__class__ = Change if type(where) is str else _DeepChange  # type: ignore[assignment]
    return change  # type: ignore[return-value]


class JSONPrefixError(ProtocolError):
    """The text can never become valid JSON. `offset` is the index, in the whole text fed so far,
    of the first impossible character (for IncompleteJSON: the length of the text)."""

    def __init__(self, reason: str, *, offset: int) -> None:
        super().__init__(f"{reason} (offset {offset})")
        self.reason = reason
        self.offset = offset


class IncompleteJSON(JSONPrefixError):
    """Raised by `close()`: the document ended before it was complete.

    `pointers` names every value that never settled, outermost first (a lazy sequence of
    pointer strings: only the ones you index are built)."""

    def __init__(self, reason: str, *, offset: int, pointers: Sequence[str]) -> None:
        super().__init__(reason, offset=offset)
        self.pointers = pointers


class _Bad(Exception):
    """Internal: the character at `index` of the scanned text is impossible."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# The state machine.

# Structural states: what the next non-whitespace character may be.
_VALUE = 0  # a value (document start, after ':' or after ',' in an array)
_FIRST_ITEM = 1  # a value or ']' (just after '[')
_FIRST_KEY = 2  # a key or '}' (just after '{')
_KEY = 3  # a key (after ',' in an object)
_COLON = 4  # ':' after a key
_AFTER_MEMBER = 5  # ',' or '}' after an object member's value
_AFTER_ITEM = 6  # ',' or ']' after an array item
_DONE = 7  # the top-level value is complete: whitespace only
# Token states: inside a token that may continue in the next piece of text.
_STRING = 8  # a string value
_KEYSTR = 9  # an object key
_NUMBER = 10  # a number (its raw text is in _carry)
_LITERAL = 11  # true / false / null (its raw letters are in _carry)

# Actions picked by a structural state's table.
_A_STRING, _A_NUMBER, _A_LITERAL, _A_OBJECT, _A_ARRAY = 1, 2, 3, 4, 5
_A_KEY, _A_COLON, _A_COMMA, _A_CLOSE = 6, 7, 8, 9

_VALUE_STARTS = {
    '"': _A_STRING,
    "{": _A_OBJECT,
    "[": _A_ARRAY,
    "-": _A_NUMBER,
    **{d: _A_NUMBER for d in "0123456789"},
    "t": _A_LITERAL,
    "f": _A_LITERAL,
    "n": _A_LITERAL,
}

# state -> {character: action}; a character missing from its state's table is impossible.
_TRANSITIONS: list[dict[str, int]] = [
    _VALUE_STARTS,  # _VALUE
    {**_VALUE_STARTS, "]": _A_CLOSE},  # _FIRST_ITEM
    {'"': _A_KEY, "}": _A_CLOSE},  # _FIRST_KEY
    {'"': _A_KEY},  # _KEY
    {":": _A_COLON},  # _COLON
    {",": _A_COMMA, "}": _A_CLOSE},  # _AFTER_MEMBER
    {",": _A_COMMA, "]": _A_CLOSE},  # _AFTER_ITEM
    {},  # _DONE
]

_EXPECTED = [
    "a value",
    "a value or ']'",
    "a string key or '}'",
    "a string key",
    "':'",
    "',' or '}'",
    "',' or ']'",
    "nothing but whitespace after the top-level value",
]

# Frame layout (one list per open container).
_F_PARENT = 0  # the parent's frame, None for the root container
_F_TOKEN = 1  # this container's key (str) or index (int) in its parent
_F_POINTER = 2  # its pointer string while that is short, else None (built when read)
_F_OBJ = 3  # the container's dict or list, filled as children settle
_F_KEY = 4  # object: the current member's key
_F_CALL = 5  # the number of the feed call that opened it ...
_F_INDEX = 6  # ... and the index of its PROVISIONAL change in that call's list
_F_START = 7  # the offset of its opening bracket in the whole text

_WS = " \t\n\r"
_ws_end = re.compile(r"[ \t\n\r]*").match
_string_chunk = re.compile(r'[^"\\\x00-\x1f]*').match
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_number = _NUMBER_RE.match  # the longest complete number at the start (groups: fraction, exponent)
# The longest prefix that can still begin a number (test_prefix checks it against json.loads for
# every string of number characters up to 5 long).
_number_head = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:(?:\.[0-9]+)?[eE][-+]?[0-9]*|\.[0-9]*)?)?").match
_NUMBER_CHARS = frozenset("-+.eE0123456789")
_hex4 = re.compile(r"[0-9a-fA-F]{4}").fullmatch
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


# json.loads refuses integers longer than the interpreter's limit (ValueError); so do we, at the
# digit that crosses it -- for any number, so that the outcome does not depend on the cutting.
_INT_DIGITS = sys.get_int_max_str_digits() or sys.maxsize
_int_part = re.compile(r"-?[0-9]*").match

_CACHE_POINTERS_UP_TO = 256  # a frame keeps a pointer string if its parent's is at most this long
_MISSING = object()


def _number_value(match: re.Match[str]) -> int | float:
    return float(match.group()) if match.lastindex else int(match.group())


def _provisional_number(text: str) -> int | float | None:
    """The number the received characters of an unfinished number spell, if any."""
    if text.isdigit():
        return int(text)
    m = _number(text)
    return None if m is None else _number_value(m)


def _check_int_part(text: str, start: int) -> None:
    end = _int_part(text, start).end()
    digits = end - start - (text[start] == "-")
    if digits > _INT_DIGITS:
        raise _Bad(end - digits + _INT_DIGITS, f"integer part longer than {_INT_DIGITS} digits")


def _escape(text: str, j: int, n: int) -> tuple[str | None, int]:
    """Decode the escape at text[j] == '\\'. Returns (decoded, next index), or (None, j) while
    the text does not yet hold enough to decide. Raises _Bad at an impossible character."""
    if j + 1 >= n:
        return None, j
    e = text[j + 1]
    simple = _ESCAPES.get(e)
    if simple is not None:
        return simple, j + 2
    if e != "u":
        raise _Bad(j + 1, f"invalid escape '\\{e}' in a string")
    digits = text[j + 2 : j + 6]
    if len(digits) < 4 or not _hex4(digits):
        for k, char in enumerate(digits):
            if char not in _HEX:
                raise _Bad(j + 2 + k, "invalid \\u escape in a string")
        return None, j
    code = int(digits, 16)
    if code < 0xD800 or code > 0xDBFF:
        return chr(code), j + 6
    # A high surrogate: json.loads pairs it with an immediately following low-surrogate escape.
    if j + 6 >= n:
        return None, j
    if text[j + 6] != "\\":
        return chr(code), j + 6
    if j + 7 >= n:
        return None, j
    if text[j + 7] != "u":
        return chr(code), j + 6
    low = text[j + 8 : j + 12]
    for k, char in enumerate(low):
        if char not in _HEX:
            raise _Bad(j + 8 + k, "invalid \\u escape in a string")
    if len(low) < 4:
        return None, j
    low_code = int(low, 16)
    if 0xDC00 <= low_code <= 0xDFFF:
        return chr(0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)), j + 12
    return chr(code), j + 6


# ---------------------------------------------------------------------------------------------
# Pointers, built only when read.


def _child_pointer(frame: list[Any], token: str | int) -> Any:
    """The pointer of a child of `frame`: a string while the frame's own is short, else a lazy
    (frame, token) where."""
    base = frame[_F_POINTER]
    if base is None:
        return (frame, token)
    if type(token) is int:
        return f"{base}/{token}"
    if "~" in token or "/" in token:  # livefill.extraction.pointer.escape, inlined: this is the hot path
        token = token.replace("~", "~0").replace("/", "~1")  # type: ignore[union-attr]
    return base + "/" + token  # type: ignore[operator]


def _frame_pointer(frame: list[Any]) -> str:
    pointer = frame[_F_POINTER]
    if pointer is not None:
        return pointer
    chain = []
    f = frame
    while f[_F_POINTER] is None:
        chain.append(f)
        f = f[_F_PARENT]
    chain.reverse()
    return "".join([f[_F_POINTER], *["/" + _escape_pointer_token(g[_F_TOKEN]) for g in chain]])


def _pointer_of(where: Any) -> str:
    if type(where) is str:
        return where
    if where is None:
        return ""
    if type(where) is tuple:
        return _frame_pointer(where[0]) + "/" + _escape_pointer_token(where[1])
    return _frame_pointer(where)


class _Pointers(Sequence[str]):
    """A read-only sequence of pointers, each built when indexed (see IncompleteJSON)."""

    __slots__ = ("_wheres",)

    def __init__(self, wheres: list[Any]) -> None:
        self._wheres = wheres

    def __len__(self) -> int:
        return len(self._wheres)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [_pointer_of(w) for w in self._wheres[index]]
        return _pointer_of(self._wheres[index])

    def __iter__(self) -> Iterator[str]:
        return (_pointer_of(w) for w in self._wheres)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Sequence)) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if len(self._wheres) <= 8:
            return repr(list(self))
        return f"<{len(self._wheres)} pointers: {self[0]!r} ... innermost {self[-1][:80]!r}...>"


def _parse_pointer(pointer: str) -> list[str]:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise UsageError(f"not a JSON pointer: {pointer!r}")
    return _pointer_tokens(pointer)


def _array_index(token: str) -> int | None:
    if token.isdigit() and token.isascii() and (token == "0" or token[0] != "0"):
        return int(token)
    return None


def _child(container: Any, token: str) -> Any:
    """The child named by a pointer token, or _MISSING."""
    if type(container) is dict:
        return container.get(token, _MISSING)
    if type(container) is list:
        index = _array_index(token)
        if index is not None and index < len(container):
            return container[index]
    return _MISSING


# ---------------------------------------------------------------------------------------------


_PENDING = ValueState.PENDING
_PROVISIONAL = ValueState.PROVISIONAL
_SETTLED = ValueState.SETTLED


_SYNC = object()  # sent to the machine instead of text: it writes its state into its box


def _machine(
    stack: list[list[Any]],
    box: list[Any],
    parser: Callable[[], PrefixParser | None],
    max_depth: float,
    *,
    # Module constants, helpers and builtins bound once as locals: the loop reads them with
    # LOAD_FAST instead of a global lookup, thousands of times per document.
    _AFTER_ITEM=_AFTER_ITEM, _AFTER_MEMBER=_AFTER_MEMBER, _A_CLOSE=_A_CLOSE, _A_COLON=_A_COLON,
    _A_COMMA=_A_COMMA, _A_KEY=_A_KEY, _A_LITERAL=_A_LITERAL, _A_NUMBER=_A_NUMBER,
    _A_OBJECT=_A_OBJECT, _A_STRING=_A_STRING, _CACHE_POINTERS_UP_TO=_CACHE_POINTERS_UP_TO,
    _COLON=_COLON, _DIGITS=_DIGITS, _DONE=_DONE, _FIRST_ITEM=_FIRST_ITEM, _FIRST_KEY=_FIRST_KEY,
    _F_CALL=_F_CALL, _F_INDEX=_F_INDEX, _F_KEY=_F_KEY, _F_OBJ=_F_OBJ, _F_POINTER=_F_POINTER,
    _F_START=_F_START, _INT_DIGITS=_INT_DIGITS, _KEY=_KEY, _KEYSTR=_KEYSTR, _LITERAL=_LITERAL,
    _LITERALS=_LITERALS, _NUMBER=_NUMBER, _PENDING=_PENDING, _PROVISIONAL=_PROVISIONAL,
    _SETTLED=_SETTLED, _STRING=_STRING, _TRANSITIONS=_TRANSITIONS, _VALUE=_VALUE, _WS=_WS,
    Change=Change, _DeepChange=_DeepChange, _SYNC=_SYNC, _Twin=_Twin, _change=_change,
    _child_pointer=_child_pointer, _escape=_escape, _number_head=_number_head, _NUMBER_CHARS=_NUMBER_CHARS,
    _provisional_number=_provisional_number, _string_chunk=_string_chunk, _ws_end=_ws_end,
    dict=dict, float=float, int=int, len=len, str=str, type=type,
) -> Generator[Any, Any, None]:
    """The parser's loop (see "How this works"): a generator whose locals are the parser's state
    between calls. Sent a piece of text, it answers with that piece's changes; sent _SYNC, it
    copies its state into `box` and answers None. It starts from the state in `box`, and leaves
    its state there when an exception ends it (then tells the parser, through `parser`, a weak
    reference that keeps the two from holding each other alive)."""
    state, sval, carry, leaf, vstart, root, consumed, calls = box
    top: Any = stack[-1] if stack else None  # the innermost open container's frame
    obj: Any = None if top is None else top[_F_OBJ]  # ... its dict or list
    isobj = type(obj) is dict  # ... whether that is a dict
    changes: Any = None
    try:
        while True:
            text = yield changes
            if type(text) is not str:
                if text is _SYNC:
                    box[:] = (state, sval, carry, leaf, vstart, root, consumed, calls)
                    changes = None
                    continue
                raise UsageError(f"feed() takes str, not {type(text).__name__}")
            n = len(text)
            # Fast path (most pieces of a stream): the piece lies wholly inside a string's or a key's
            # body. isprintable() rules out control characters; the regex decides the rare rest.
            # (Between calls a number or a literal always has its text in `carry`.)
            if state >= _STRING and not carry:
                if n and '"' not in text and "\\" not in text and (text.isprintable() or _string_chunk(text).end() == n):
                    consumed += n
                    sval += text
                    if state == _KEYSTR:
                        changes = []
                        continue
                    change = _Twin()
                    change.state = _PROVISIONAL
                    change.value = sval
                    change._start = vstart
                    change._end = consumed
                    if type(leaf) is str:
                        change.pointer = leaf
                        change.__class__ = Change  # type: ignore[assignment]
                    else:
                        change._where = leaf  # deep inside: built when read
                        change.__class__ = _DeepChange  # type: ignore[assignment]
                    changes = [change]
                    continue
            if not n:
                changes = []
                continue
            consumed += n  # an error's offset is consumed - n + its index
            if carry:
                text = carry + text
                carry = ""
                n = len(text)
            base = consumed - n  # the offset of text[0] in the whole text
            i = 0
            changes = []
            call = 0  # numbered (calls) only when a container opens in this call
            colon_here = False  # a key's colon arrived in this call
            dups: list[tuple[str, int]] | None = None
            try:
                while i < n:
                    if state >= _STRING:
                        if state <= _KEYSTR:
                            # ---- inside a string value or a key: its body runs to the closing quote
                            j = _string_chunk(text, i).end()
                            if j > i:
                                sval += text[i:j]
                            if j == n:
                                i = n
                                break
                            c = text[j]
                            if c == "\\":
                                decoded, i = _escape(text, j, n)
                                if decoded is None:
                                    carry = text[j:]
                                    i = n
                                    break
                                sval += decoded
                                continue
                            if c != '"':
                                raise _Bad(j, f"raw control character {c!r} in a {'key' if state == _KEYSTR else 'string'}")
                            i = j + 1
                            if state == _KEYSTR:
                                key = top[_F_KEY] = sval  # type: ignore[index]
                                sval = ""
                                if i == n or text[i] != ":":
                                    state = _COLON
                                    continue
                                # most keys are followed right away by their colon (as _A_COLON does)
                                state = _VALUE
                                colon_here = True
                                if key in obj:
                                    dups = _note_duplicate(dups, top, key, len(changes))
                                i += 1
                                continue
                            value: Any = sval
                            sval = ""
                        elif state == _NUMBER:
                            # ---- a number: the longest run of characters that can still begin one
                            j = _number_head(text, i).end()
                            if j - i > _INT_DIGITS:
                                _check_int_part(text, i)
                            if j == n:
                                # unfinished: keep its text, and the value it spells so far
                                carry = text[i:]
                                if carry.isdigit():
                                    number = int(carry)
                                elif carry[-1] in _DIGITS:  # complete so far: "-12", "1.5", "1e3"
                                    number = int(carry) if carry[1:].isdigit() else float(carry)
                                else:  # "-", "12.", "1.5e-"
                                    number = _provisional_number(carry)
                                i = n
                                break
                            word = text[i:j]
                            if word[-1] not in _DIGITS or text[j] in _NUMBER_CHARS:  # "1.," or "1.2.3"
                                raise _Bad(j, "invalid number")
                            value = int(word) if word.isdigit() or word[1:].isdigit() else float(word)
                            i = j
                        else:
                            # ---- a literal: true / false / null
                            word, value = _LITERALS[text[i]]
                            if text.startswith(word, i):
                                i += len(word)
                            else:
                                got = text[i : i + len(word)]
                                for k, char in enumerate(got):
                                    if char != word[k]:
                                        raise _Bad(i + k, f"invalid literal (expected {word!r})")
                                carry = got
                                i = n
                                break
                        # ---- a scalar settled: insert it into its container and report it
                        if top is None:
                            root = value
                            leaf = ""
                            state = _DONE
                        elif isobj:
                            key = top[_F_KEY]
                            obj[key] = value  # type: ignore[index]
                            if leaf is None:
                                leaf = _child_pointer(top, key)
                            state = _AFTER_MEMBER
                        else:
                            if leaf is None:
                                leaf = _child_pointer(top, len(obj))  # type: ignore[arg-type]
                            obj.append(value)  # type: ignore[union-attr]
                            state = _AFTER_ITEM
                        change = _Twin()
                        change.state = _SETTLED
                        change.value = value
                        change._start = vstart
                        change._end = base + i
                        if type(leaf) is str:
                            change.pointer = leaf
                            change.__class__ = Change  # type: ignore[assignment]
                        else:
                            change._where = leaf
                            change.__class__ = _DeepChange  # type: ignore[assignment]
                        changes.append(change)  # type: ignore[arg-type]
                        leaf = None
                        continue
                    else:
                        # ---- structural: skip whitespace, then look the character up in the table
                        c = text[i]
                        if c in _WS:
                            i += 1
                            if i == n:
                                break
                            c = text[i]
                            if c in _WS:
                                i = _ws_end(text, i).end()
                                if i == n:
                                    break
                                c = text[i]
                        action = _TRANSITIONS[state].get(c)
                        if action is None:
                            raise _Bad(i, f"unexpected {c!r}: expected {_EXPECTED[state]}")
                    if action == _A_STRING:
                        state = _STRING
                        vstart = base + i
                        i += 1
                    elif action == _A_KEY:
                        state = _KEYSTR
                        i += 1
                    elif action == _A_COLON:
                        state = _VALUE
                        colon_here = True
                        if top[_F_KEY] in obj:  # type: ignore[index,operator]
                            dups = _note_duplicate(dups, top, top[_F_KEY], len(changes))  # type: ignore[index]
                        i += 1
                    elif action == _A_COMMA:
                        state = _KEY if isobj else _VALUE
                        i += 1
                    elif action == _A_NUMBER:
                        state = _NUMBER
                        vstart = base + i
                    elif action == _A_LITERAL:
                        state = _LITERAL
                        vstart = base + i
                    elif action == _A_CLOSE:
                        change = _Twin()
                        pointer = top[_F_POINTER]  # type: ignore[index]
                        change.state = _SETTLED
                        change.value = obj
                        change._start = top[_F_START]  # type: ignore[index]
                        change._end = base + i + 1
                        if pointer is None:
                            change._where = top
                            change.__class__ = _DeepChange  # type: ignore[assignment]
                        else:
                            change.pointer = pointer
                            change.__class__ = Change  # type: ignore[assignment]
                        if top[_F_CALL] == call:  # type: ignore[index]
                            changes[top[_F_INDEX]] = change  # type: ignore[index,call-overload]
                        else:
                            changes.append(change)  # type: ignore[arg-type]
                        stack.pop()
                        if stack:
                            top = stack[-1]
                            obj = top[_F_OBJ]
                            isobj = type(obj) is dict
                            state = _AFTER_MEMBER if isobj else _AFTER_ITEM
                        else:
                            top = obj = None
                            state = _DONE
                        i += 1
                    else:
                        # ---- a container opens
                        if len(stack) >= max_depth:
                            raise _Bad(i, f"the JSON is nested deeper than {max_depth} levels, the most taken here")
                        new: Any = {} if action == _A_OBJECT else []
                        if top is None:
                            root = new
                            pointer = ""
                            if not call:
                                call = calls = calls + 1
                            frame = [None, None, pointer, new, None, call, len(changes), base + i]
                        else:
                            token = top[_F_KEY] if isobj else len(obj)  # type: ignore[arg-type]
                            parent_pointer = top[_F_POINTER]
                            if parent_pointer is None or len(parent_pointer) > _CACHE_POINTERS_UP_TO:
                                pointer = None
                            else:
                                pointer = _child_pointer(top, token)
                            if not call:
                                call = calls = calls + 1
                            frame = [top, token, pointer, new, None, call, len(changes), base + i]
                            if isobj:
                                obj[token] = new  # type: ignore[index]
                            else:
                                obj.append(new)  # type: ignore[union-attr]
                        change = _Twin()
                        change.state = _PROVISIONAL
                        change.value = {} if action == _A_OBJECT else []
                        change._start = base + i
                        change._end = base + i + 1
                        if pointer is None:
                            change._where = frame
                            change.__class__ = _DeepChange  # type: ignore[assignment]
                        else:
                            change.pointer = pointer
                            change.__class__ = Change  # type: ignore[assignment]
                        changes.append(change)  # type: ignore[arg-type]
                        leaf = None
                        stack.append(frame)
                        top = frame
                        obj = new
                        isobj = action == _A_OBJECT
                        state = _FIRST_KEY if isobj else _FIRST_ITEM
                        i += 1

                # ---- the unfinished value at the end of this piece reports what it has so far
                if state >= _STRING:
                    if state != _KEYSTR:
                        if state == _STRING:
                            value = sval
                        elif state == _NUMBER:
                            value = number
                        else:
                            value = None
                        if value is not None:
                            if leaf is None:
                                leaf = "" if top is None else _child_pointer(top, top[_F_KEY] if isobj else len(obj))  # type: ignore[arg-type]
                            change = _Twin()
                            change.state = _PROVISIONAL
                            change.value = value
                            change._start = vstart
                            change._end = base + n
                            if type(leaf) is str:
                                change.pointer = leaf
                                change.__class__ = Change  # type: ignore[assignment]
                            else:
                                change._where = leaf
                                change.__class__ = _DeepChange  # type: ignore[assignment]
                            changes.append(change)  # type: ignore[arg-type]
                        elif colon_here and isobj:  # a lone "-" or a literal's first letters
                            leaf = _child_pointer(top, top[_F_KEY])  # type: ignore[arg-type,index]
                            changes.append(_change(leaf, _PENDING, None))
                elif state == _VALUE and colon_here and isobj:  # a key and its colon, no value yet
                    leaf = _child_pointer(top, top[_F_KEY])  # type: ignore[arg-type,index]
                    changes.append(_change(leaf, _PENDING, None))
            except _Bad as bad:
                raise JSONPrefixError(bad.reason, offset=consumed - n + bad.index) from None
            if dups is not None:
                changes = _drop_replaced(changes, dups)
            text = None  # not kept while waiting for the next piece (it may be the whole document)
    except GeneratorExit:  # the parser is gone or closed: nothing to keep
        raise
    except BaseException as error:
        box[:] = (state, sval, carry, leaf, vstart, root, consumed, calls)
        owner = parser()
        if owner is not None:
            owner._stopped(error)
        raise


def _refuse_feed(text: str) -> list[Change]:
    """A closed or failed parser's feed."""
    raise UsageError("feed() after close() or after an error")


class PrefixParser:
    """Incremental, strict JSON parser that reports which values have settled.

    `feed(text)` takes the next piece of the document (cut anywhere) and returns the changes it
    caused: at most one per pointer, in document order of each pointer's first change in the
    call (a container that opens in the call comes before its children). It raises
    JSONPrefixError (with `.offset`) at the first character that can never be part of valid
    JSON; the parser is unusable afterwards. `close()` ends the document.
    Feeding after `close()` or after an error raises `livefill.errors.UsageError`.
    """

    __slots__ = ("_send", "_stack", "_box", "_closed", "_failed", "_max_depth", "_state", "_root", "_consumed", "_carry", "_sval", "_leaf", "_vstart", "__weakref__")

    def __init__(self, *, max_depth: int | None = None) -> None:
        # max_depth: the most containers open at once; one more is a JSONPrefixError at its bracket
        # (None: no limit; memory stays O(depth) either way, see "Pointers" above)
        self._max_depth = math.inf if max_depth is None else max_depth
        self._stack: list[list[Any]] = []  # frames of the open containers, outermost first
        # The machine's state when it last told it (see _sync), in _machine's order:
        self._box: list[Any] = [_VALUE, "", "", None, 0, _MISSING, 0, 0]
        self._closed = False  # closed or failed: no more input
        self._failed = False
        self._load()
        self._start()

    def feed(self, text: str) -> list[Change]:
        """Parse the next piece of the document; return the changes it caused (see the class)."""
        return self._send(text)  # the machine's send; after close() or an error, a refusal

    def __reduce__(self) -> Any:
        """Pickled or deep-copied whole (the open containers and where the machine stands); a copy
        has a machine of its own."""
        self._sync()
        state = [self._state, self._sval, self._carry, self._leaf, self._vstart, self._root, self._consumed, self._box[7]]
        return (_restored, (self._stack, state, self._closed, self._failed, self._max_depth))

    def _start(self) -> None:
        machine = _machine(self._stack, self._box, weakref.ref(self), self._max_depth)
        next(machine)
        self._send: Callable[[Any], Any] = machine.send

    def _stopped(self, error: BaseException) -> None:
        """Told by the machine as an exception ends it: a wrong argument type changed nothing and
        a new machine goes on from the same state; anything else leaves the parser failed."""
        self._load()
        if type(error) is UsageError:
            self._start()
        else:
            self._closed = self._failed = True
            self._send = _refuse_feed

    def _sync(self) -> None:
        """Bring the attributes the inspecting methods read up to date with the machine."""
        if not self._closed:
            self._send(_SYNC)
            self._load()

    def _load(self) -> None:
        (
            self._state,  # see _machine for each
            self._sval,
            self._carry,
            self._leaf,
            self._vstart,
            self._root,  # the top-level value once it began (containers: the live object)
            self._consumed,  # characters fed so far
            _,
        ) = self._box

    @staticmethod
    def _leaf_pointer(top: Any, obj: Any, isobj: bool) -> Any:
        """Pointer of the unfinished scalar in the innermost open container (or at the root)."""
        if top is None:
            return ""
        return _child_pointer(top, top[_F_KEY] if isobj else len(obj))

    def close(self) -> list[Change]:
        """End the document. Returns the changes this causes (a top-level number settles here).

        Raises IncompleteJSON, naming the pointers that never settled, if the document is not
        complete."""
        if self._closed:
            raise UsageError("close() after close() or after an error")
        self._sync()
        self._closed = True
        self._send = _refuse_feed
        state = self._state
        if state == _DONE:
            return []
        if state == _NUMBER and not self._stack:
            m = _number(self._carry)
            if m is not None and m.end() == len(self._carry):
                value = _number_value(m)
                self._root = value
                self._state = _DONE
                self._carry = ""
                return [_change("", _SETTLED, value, self._vstart, self._consumed)]
        wheres = self._unsettled()
        if state == _VALUE and not self._stack:
            reason = "the document is empty"
        else:
            innermost = _pointer_of(wheres[-1])
            if len(innermost) > 120:
                innermost = innermost[:120] + "..."
            reason = f"the document ended early; {len(wheres)} value(s) never settled, innermost {innermost!r}"
        raise IncompleteJSON(reason, offset=self._consumed, pointers=_Pointers(wheres))

    def _unsettled(self) -> list[Any]:
        """Where every value that has begun but not settled is, outermost first."""
        stack = self._stack
        if not stack:
            return [""]
        wheres: list[Any] = [frame if frame[_F_POINTER] is None else frame[_F_POINTER] for frame in stack]
        top = stack[-1]
        obj = top[_F_OBJ]
        isobj = type(obj) is dict
        state = self._state
        if state in (_STRING, _NUMBER, _LITERAL) or (state == _VALUE and isobj):
            wheres.append(self._leaf_pointer(top, obj, isobj))
        return wheres

    # -- inspecting ---------------------------------------------------------------------------

    def _leaf_value(self) -> Any:
        """The unfinished scalar's provisional value, or _MISSING if it has none."""
        state = self._state
        if state == _STRING:
            return self._sval
        if state == _NUMBER:
            value = _provisional_number(self._carry)
            if value is not None:
                return value
        return _MISSING

    def value(self) -> Any:
        """The document so far: settled values plus provisional ones (keys still PENDING are
        omitted), None before any value began. After `close()` it equals `json.loads` of the
        text. Open containers are copied; settled ones are shared with the parser."""
        self._sync()
        if self._state == _DONE:
            return self._root
        child = self._leaf_value()
        stack = self._stack
        if not stack:
            return None if child is _MISSING else child
        top = True
        for frame in reversed(stack):
            obj = frame[_F_OBJ]
            if type(obj) is dict:
                copy: Any = dict(obj)
                if child is not _MISSING:
                    copy[frame[_F_KEY]] = child
            else:
                copy = list(obj)
                if child is not _MISSING:
                    if top:
                        copy.append(child)
                    else:
                        copy[-1] = child
            child = copy
            top = False
        return child

    def state(self, pointer: str) -> ValueState | None:
        """The state of the value at `pointer` now, or None if no byte of it has arrived (or it
        does not exist)."""
        tokens = _parse_pointer(pointer)
        self._sync()
        state = self._state
        stack = self._stack
        if state == _DONE:
            node = self._root
            for token in tokens:
                node = _child(node, token)
                if node is _MISSING:
                    return None
            return _SETTLED
        if not stack:
            if tokens or state == _VALUE:
                return None
            return _PROVISIONAL if self._leaf_value() is not _MISSING else _PENDING
        # Walk down the open containers while the pointer follows the path being written.
        depth = 0
        for position, token in enumerate(tokens):
            frame = stack[depth]
            obj = frame[_F_OBJ]
            isobj = type(obj) is dict
            if depth + 1 < len(stack):
                inner = stack[depth + 1][_F_TOKEN]
                if (token == inner) if isobj else (_array_index(token) == inner):
                    depth += 1
                    continue
            elif state in (_STRING, _NUMBER, _LITERAL) or (state == _VALUE and isobj):
                leaf_token = frame[_F_KEY] if isobj else len(obj)
                if (token == leaf_token) if isobj else (_array_index(token) == leaf_token):
                    if position + 1 < len(tokens):
                        return None
                    if state == _VALUE:
                        return _PENDING
                    return _PROVISIONAL if self._leaf_value() is not _MISSING else _PENDING
            node = _child(obj, token)
            if node is _MISSING:
                return None
            for rest in tokens[position + 1 :]:
                node = _child(node, rest)
                if node is _MISSING:
                    return None
            return _SETTLED
        return _PROVISIONAL  # an open container


def _restored(stack: list[list[Any]], box: list[Any], closed: bool, failed: bool, max_depth: float = math.inf) -> PrefixParser:
    """A parser from what `PrefixParser.__reduce__` gave."""
    parser = PrefixParser.__new__(PrefixParser)
    parser._max_depth = max_depth
    parser._stack = stack
    parser._box = box
    parser._closed = closed
    parser._failed = failed
    parser._load()
    if closed:
        parser._send = _refuse_feed
    else:
        parser._start()
    return parser


def _note_duplicate(dups: list[tuple[str, int]] | None, top: list[Any], key: str, position: int) -> list[tuple[str, int]]:
    """A key arrived again in its object: note its pointer and where this call's changes stand."""
    if dups is None:
        dups = []
    dups.append((_pointer_of(_child_pointer(top, key)), position))
    return dups


def _drop_replaced(changes: list[Change], dups: list[tuple[str, int]]) -> list[Change]:
    """Drop the entries this call made, before a duplicate key arrived, for the value that key
    replaces and for its descendants: the replacing value's entries stand for the pointer."""
    kept = []
    for index, change in enumerate(changes):
        pointer = change.pointer
        for replaced, position in dups:
            if index < position and (pointer == replaced or pointer.startswith(replaced + "/")):
                break
        else:
            kept.append(change)
    return kept
