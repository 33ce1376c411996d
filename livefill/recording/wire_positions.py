"""Where a value's characters lie: in the extracted JSON document, and in the bytes of the frames
that carried it. Exact by construction: positions come from the framers and the prefix parser,
nothing is searched for.

How this works
--------------
Document side. The `ArgsDelta` texts of one block index, concatenated, are the JSON document being
extracted. `DocumentSpans` feeds them to a `livefill.extraction.prefix.PrefixParser` and keeps, per pointer, the
[start, end) character span its changes carry (end None until the value settles), plus the order
in which values ended so that `prune` can forget those whose bytes were dropped. The parser holds
the values it has built; once the document passes `max_chars` it is let go and no new pointers
are tracked (`overflowed`), so the recorder's memory stays bounded. `feed_noting` says what a piece changed (`Effect`) so that a
copy in another process (a recorder that adopts a worker's journal) can `replay` it unparsed.

Frame side. A frame's `livefill.wire.taps.WireFrame` names, per delta, the string in its payload that held
the delta's text (`carriers`). `FrameLiterals` asks a prefix parser for that string's span in the
payload and walks the literal once (one step per character or escape) to get, for each decoded
character, its offset in the raw literal; `WireFrame.payload_byte` turns a payload offset into a
stream byte offset through the framer's segments. So delta character k -> raw literal offset ->
payload offset -> byte, and the bytes between two such offsets are exactly the wire's encoding
of those characters.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any

from livefill.extraction.pointer import child
from livefill.extraction.prefix import JSONPrefixError, PrefixParser, ValueState
from livefill.wire.taps import WireFrame

__all__ = ["DocumentSpans", "Effect", "FrameLiterals", "literal_offsets", "record_pointer", "related"]

_SETTLED = ValueState.SETTLED
_COPY = object()  # the parser of a DocumentSpans that is told what another one parsed

Effect = tuple[tuple[tuple[str, int, "int | None"], ...], "str | None"]
"""What one `DocumentSpans.feed` did: (pointer, start, end or None) per span it set, and why the
parser was let go ("broken", "ended") or None."""


class DocumentSpans:
    """pointer -> [start, end) character span of its value, for a JSON text fed in pieces."""

    def __init__(self, max_chars: int, *, parse: bool = True) -> None:
        # a copy that does not parse (`parse=False`) is told each piece's effect (`replay`) instead
        self._parser: Any = PrefixParser() if parse else _COPY
        self._noted: list[tuple[str, int, int | None]] | None = None  # the changes `feed_noting` notes
        self.max_chars = max_chars
        self.spans: dict[str, list[int | None]] = {}
        self.closed: deque[tuple[int, str]] = deque()  # (end, pointer) in the order values ended
        self.length = 0
        self.broken = False  # the text can never be JSON
        self.overflowed = False  # the document outgrew max_chars: no new pointers are tracked

    @property
    def parsing(self) -> bool:
        """True while new pointers are still tracked (its parser is alive)."""
        return self._parser is not None

    def feed(self, text: str) -> int:
        """Take the next piece of the document; return how many pointers it added."""
        self.length += len(text)
        parser = self._parser
        if parser is None:
            return 0
        if self.length > self.max_chars:
            self._parser = None
            self.overflowed = True
            return 0
        try:
            changes = parser.feed(text)
        except JSONPrefixError:
            self._parser = None
            self.broken = True
            return 0
        except Exception:  # a document after the document ("...}{"): nothing more to index
            self._parser = None
            return 0
        added = 0
        spans = self.spans
        noted = self._noted
        for change in changes:
            span = change.span
            if span is None:  # PENDING: no character of the value yet
                continue
            pointer = change.pointer
            entry = spans.get(pointer)
            if entry is None:
                spans[pointer] = entry = [span[0], None]
                added += 1
            elif entry[0] != span[0]:  # a duplicate key: the new value replaces the old one
                entry[0], entry[1] = span[0], None
            elif change.state is not _SETTLED:
                continue
            if change.state is _SETTLED:
                entry[1] = span[1]
                self.closed.append((span[1], pointer))
            if noted is not None:
                noted.append((pointer, span[0], entry[1]))
        return added

    def feed_noting(self, text: str) -> tuple[int, Effect | None]:
        """`feed`, and what it did in a form `replay` repeats on a copy in the same state without
        parsing: None when it changed nothing but the length, else (the span changes, "broken" or
        "ended" when the parser was let go for a reason the copy cannot see)."""
        before = self._parser
        self._noted = []
        try:
            added = self.feed(text)
        finally:
            noted, self._noted = self._noted, None
        ended = None
        if before is not None and self._parser is None and not self.overflowed:
            ended = "broken" if self.broken else "ended"
        return added, (tuple(noted), ended) if noted or ended else None

    def replay(self, chars: int, effect: Effect | None) -> int:
        """What `feed` of a piece of `chars` characters did on the original (`feed_noting`'s
        effect), done to this copy; returns how many pointers it added."""
        self.length += chars
        if self._parser is None:
            return 0
        if self.length > self.max_chars:
            self._parser = None
            self.overflowed = True
            return 0
        if effect is None:
            return 0
        changes, ended = effect
        added = 0
        spans = self.spans
        for pointer, start, end in changes:
            entry = spans.get(pointer)
            if entry is None:
                spans[pointer] = entry = [start, None]
                added += 1
            elif entry[0] != start:
                entry[0], entry[1] = start, None
            if end is not None:
                entry[1] = end
                self.closed.append((end, pointer))
        if ended is not None:
            self._parser = None
            self.broken = ended == "broken"
        return added

    def prune(self, before: int) -> int:
        """Forget values that ended at or before character `before`; returns how many."""
        gone = 0
        closed, spans = self.closed, self.spans
        while closed and closed[0][0] <= before:
            end, pointer = closed.popleft()
            span = spans.get(pointer)
            if span is not None and span[1] == end:
                del spans[pointer]
                gone += 1
        return gone


def literal_offsets(body: str) -> list[int]:
    """For the raw body of a JSON string literal (no quotes): the raw offset where each decoded
    character begins, plus the body's length (so `len(result) - 1` decoded characters). A
    `\\uD83D\\uDE00` surrogate pair decodes to one character, as json.loads does."""
    out: list[int] = []
    i, n = 0, len(body)
    find = body.find
    while i < n:
        j = find("\\", i)
        if j < 0:
            out.extend(range(i, n))
            break
        out.extend(range(i, j))
        out.append(j)
        if body[j + 1 : j + 2] != "u":
            i = j + 2
            continue
        code = int(body[j + 2 : j + 6], 16)
        if 0xD800 <= code < 0xDC00 and body[j + 6 : j + 8] == "\\u":
            low = int(body[j + 8 : j + 12], 16)
            if 0xDC00 <= low < 0xE000:
                i = j + 12
                continue
        i = j + 6
    out.append(n)
    return out


class FrameLiterals:
    """Where each carried delta's characters lie in a frame's payload. Finding the delta's string
    in the payload takes a parse, so where each one begins is kept in an LRU of `size` entries
    (about `ENTRY_COST` bytes each); the walk over the literal itself is cheap and not kept."""

    ENTRY_COST = 320  # an OrderedDict entry, its key and value tuples and their ints (tracemalloc: ~283)

    def __init__(self, size: int = 256) -> None:
        self._cache: OrderedDict[tuple[int, str], tuple[int, int] | None] = OrderedDict()
        self._size = size

    def char_span(
        self, key: int, frame: WireFrame, carrier: str | None, a: int, b: int, length: int
    ) -> tuple[int, int] | None:
        """Payload offsets [pa, pb) of characters [a, b) of the delta (of `length` characters)
        that `carrier` names in `frame`; None if the frame does not hold it."""
        if carrier is None:
            return (a, b) if len(frame.payload) == length else None
        entry = self._literal(key, frame, carrier)
        if entry is None:
            return None
        start, end = entry
        offsets = literal_offsets(frame.payload[start:end])
        if len(offsets) != length + 1:
            return None
        return start + offsets[a], start + offsets[b]

    def _literal(self, key: int, frame: WireFrame, carrier: str) -> tuple[int, int] | None:
        """[start, end) of the body (no quotes) of the string `carrier` names in the payload."""
        cache_key = (key, carrier)
        if cache_key in self._cache:
            self._cache.move_to_end(cache_key)
            return self._cache[cache_key]
        entry = None
        parser = PrefixParser()
        try:
            changes = parser.feed(frame.payload)
        except Exception:
            changes = []
        for change in changes:
            if change.state is _SETTLED and isinstance(change.value, str) and change.pointer == carrier:
                s, e = change.span  # type: ignore[misc]
                entry = (s + 1, e - 1)
                break
        self._cache[cache_key] = entry
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return entry


def record_pointer(event: Any) -> str | None:
    """The pointer a relay record carried (an item record: its element), None for other events."""
    pointer = getattr(event, "pointer", None)
    if not isinstance(pointer, str):
        return None
    idx = getattr(event, "index", None)
    if getattr(event, "type", None) == "item" and isinstance(idx, int):
        return child(pointer, idx)
    return pointer


def related(a: str, b: str) -> bool:
    """True if pointer a is b, or an ancestor or a descendant of b."""
    return a == b or b.startswith(a + "/") or a.startswith(b + "/")
