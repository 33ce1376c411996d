"""Server-sent events decoder (sans-IO): bytes in, `ServerSentEvent`s out.

How this works
--------------
`SSEDecoder.feed(data)` takes whatever bytes the network delivered, cut anywhere, and returns the
events those bytes completed; `close()` ends the stream. It follows the WHATWG "parsing an event
stream" rules (summarised at the end of design/WIRE.md):

1. Bytes are decoded by one incremental UTF-8 decoder for the whole stream, so a character cut
   across two reads is joined (invalid bytes become U+FFFD, as the spec's UTF-8 decode does).
   One U+FEFF is removed only if it is the very first character of the stream.
2. Lines end in CRLF, LF or a lone CR. A CR that is the last character of a read ends its line at
   once (no waiting); `_after_cr` remembers it so that an LF at the start of the next read is
   taken as the second half of that CRLF and not as a blank line. Never `str.splitlines()`, which
   also splits on U+2028, U+0085, \\x0b, \\x1c ...
3. The unfinished last line is kept as a list of pieces (joined once, when its ending arrives), so
   a long line arriving byte by byte costs linear time.
4. Each line is a blank line (dispatch), a comment (`:`), or a field (`name: value`, one leading
   space dropped; no colon means an empty value). `event` sets the type, `data` appends value+LF,
   `id` sets the last event id unless it holds U+0000 (it persists across events), `retry` counts
   only when it is all ASCII digits; other fields are ignored.
5. Dispatch: an empty data buffer dispatches nothing (no phantom event from a remembered id);
   otherwise one trailing LF is dropped and the type defaults to "message". The event type and
   the retry value are reset at every dispatch, the last event id is not.
6. At EOF an event that never got its blank line is discarded, as is an unterminated last line.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from core.errors import UsageError

__all__ = ["ServerSentEvent", "SSEDecoder"]

_EOL = re.compile(r"\r\n?|\n")
_BOM = "\ufeff"


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSentEvent:
    """One dispatched event.

    `event` is the type (`"message"` when the stream named none), `data` the joined data lines,
    `id` the last event id at dispatch (`None` if the stream never set one), `retry` the
    reconnection time a `retry` line inside this very event asked for (else `None`).
    """

    event: str = "message"
    data: str
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental WHATWG event-stream parser.

    >>> d = SSEDecoder()
    >>> d.feed(b"event: ping\\ndata: {}\\n") + d.feed(b"\\n")
    [ServerSentEvent(event='ping', data='{}', id=None, retry=None)]

    `feed(bytes)` returns the events completed by those bytes; `close()` discards an unfinished
    event and returns `[]`. Feeding after `close()` raises `core.errors.UsageError`.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._bom_checked = False
        self._after_cr = False
        self._partial: list[str] = []
        self._data: list[str] = []
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
        return self._take(self._decoder.decode(data))

    def close(self) -> list[ServerSentEvent]:
        """End of stream: an event without its blank line (and any unended line) is discarded."""
        if not self._closed:
            self._closed = True
            self._decoder.decode(b"", final=True)
            self._partial.clear()
            self._data.clear()
            self._event = ""
            self._retry = None
        return []

    # -- internals -------------------------------------------------------------------------

    def _take(self, text: str) -> list[ServerSentEvent]:
        if not text:
            return []
        if not self._bom_checked:
            self._bom_checked = True
            if text[0] == _BOM:
                text = text[1:]
                if not text:
                    return []
        pos = 0
        if self._after_cr:
            self._after_cr = False
            if text[0] == "\n":
                pos = 1
        events: list[ServerSentEvent] = []
        n = len(text)
        search = _EOL.search
        while pos < n:
            m = search(text, pos)
            if m is None:
                self._partial.append(text[pos:])
                break
            start, end = m.span()
            if self._partial:
                self._partial.append(text[pos:start])
                line = "".join(self._partial)
                self._partial.clear()
            else:
                line = text[pos:start]
            if end == n and text[start] == "\r" and end - start == 1:
                self._after_cr = True
            self._line(line, events)
            pos = end
        return events

    def _line(self, line: str, events: list[ServerSentEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == ":":
            return
        colon = line.find(":")
        if colon < 0:
            name, value = line, ""
        else:
            name, value = line[:colon], line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self._retry = int(value)
        # any other field name is ignored

    def _dispatch(self, events: list[ServerSentEvent]) -> None:
        retry, self._retry = self._retry, None
        event, self._event = self._event, ""
        if not self._data:
            return
        data = "\n".join(self._data)
        self._data.clear()
        events.append(ServerSentEvent(event=event or "message", data=data, id=self._last_id, retry=retry))
