"""Server-sent events decoder (sans-IO): bytes in, `ServerSentEvent`s out.

`SSEDecoder.feed(data)` takes whatever bytes the network delivered, cut anywhere, and returns the
events those bytes completed, each with its byte span; `close()` ends the stream. It follows the
WHATWG "parsing an event stream" rules; how, rule by rule: docs/notes/sse.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from livefill.errors import UsageError

__all__ = ["ServerSentEvent", "SSEDecoder"]

_EOL = re.compile(rb"\r\n?|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSentEvent:
    """One dispatched event.

    `event` is the type (`"message"` when the stream named none), `data` the joined data lines,
    `id` the last event id at dispatch (`None` if the stream never set one), `retry` the
    reconnection time a `retry` line inside this very event asked for (else `None`).
    `start`/`end` is the event's byte span in the stream and `data_starts` the byte offset of
    each data line's value (see the top of the module); they take no part in comparisons.
    """

    event: str = "message"
    data: str
    id: str | None = None
    retry: int | None = None
    start: int = field(default=0, compare=False, repr=False)
    end: int = field(default=0, compare=False, repr=False)
    data_starts: tuple[int, ...] = field(default=(), compare=False, repr=False)


class SSEDecoder:
    """Incremental WHATWG event-stream parser.

    >>> d = SSEDecoder()
    >>> d.feed(b"event: ping\\ndata: {}\\n") + d.feed(b"\\n")
    [ServerSentEvent(event='ping', data='{}', id=None, retry=None)]

    `feed(bytes)` returns the events completed by those bytes; `close()` discards an unfinished
    event and returns `[]`. Feeding after `close()` raises `livefill.errors.UsageError`.
    """

    def __init__(self) -> None:
        self._offset = 0  # bytes fed so far
        self._first_line = True
        self._after_cr = False
        self._partial: list[bytes] = []
        self._line_start = 0  # offset of the unfinished line's first byte
        self._event_start: int | None = None  # offset of the current event's first line
        self._data: list[str] = []
        self._data_starts: list[int] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._closed = False

    @property
    def last_event_id(self) -> str | None:
        """The last event id seen so far (what a reconnect would send as Last-Event-ID)."""
        return self._last_id

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Consume `data` (any cut of the byte stream); return the events it completed."""
        if self._closed:
            raise UsageError("SSEDecoder.feed() after close()")
        return self._take(bytes(data))

    def close(self) -> list[ServerSentEvent]:
        """End of stream: an event without its blank line (and any unended line) is discarded."""
        if not self._closed:
            self._closed = True
            self._partial.clear()
            self._data.clear()
            self._data_starts.clear()
            self._event = ""
            self._retry = None
        return []

    # -- internals -------------------------------------------------------------------------

    def _take(self, data: bytes) -> list[ServerSentEvent]:
        n = len(data)
        if not n:
            return []
        base = self._offset
        self._offset += n
        pos = 0
        if self._after_cr:
            self._after_cr = False
            if data[0] == 0x0A:
                pos = 1
        events: list[ServerSentEvent] = []
        search = _EOL.search
        while pos < n:
            m = search(data, pos)
            if m is None:
                if not self._partial:
                    self._line_start = base + pos
                self._partial.append(data[pos:])
                break
            start, end = m.span()
            if self._partial:
                self._partial.append(data[pos:start])
                line = b"".join(self._partial)
                self._partial.clear()
                line_start = self._line_start
            else:
                line = data[pos:start]
                line_start = base + pos
            if end == n and end - start == 1 and data[start] == 0x0D:
                self._after_cr = True
            self._line(line, line_start, events)
            pos = end
        return events

    def _line(self, line: bytes, start: int, events: list[ServerSentEvent]) -> None:
        if self._first_line:
            self._first_line = False
            if line.startswith(_BOM):
                line = line[3:]
                start += 3
        if self._event_start is None:
            self._event_start = start
        if not line:
            self._dispatch(events, start)
            return
        if line[0] == 0x3A:  # ':' a comment
            return
        colon = line.find(b":")
        if colon < 0:
            name, value, at = line, b"", len(line)
        else:
            name, at = line[:colon], colon + 1
            if line[at : at + 1] == b" ":
                at += 1
            value = line[at:]
        if name == b"data":
            self._data.append(value.decode("utf-8", "replace"))
            self._data_starts.append(start + at)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\x00" not in value:
                self._last_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value and value.isdigit():  # bytes.isdigit(): ASCII digits only
                self._retry = int(value)
        # any other field name is ignored

    def _dispatch(self, events: list[ServerSentEvent], end: int) -> None:
        retry, self._retry = self._retry, None
        event, self._event = self._event, ""
        start, self._event_start = self._event_start, None
        if not self._data:
            return
        data = "\n".join(self._data)
        starts = tuple(self._data_starts)
        self._data.clear()
        self._data_starts.clear()
        events.append(
            ServerSentEvent(
                event=event or "message", data=data, id=self._last_id, retry=retry,
                start=start if start is not None else end, end=end, data_starts=starts,
            )
        )
