"""Strict NDJSON framer (sans-IO): bytes in, complete lines (decoded text) out.

How this works
--------------
Only the byte `\\n` ends a line (`\\r\\n` is accepted: the `\\r` is dropped with it). A `\\n` byte can
never occur inside a multibyte UTF-8 sequence, so the framer cuts the *bytes* at `\\n` and decodes
each line with its own strict incremental UTF-8 decoder while the line is still arriving. That
gives, with no rescanning:

- invalid UTF-8 is reported by the `feed` that delivers the bad byte;
- a line that ends (or a stream that ends) inside a multibyte character is reported;
- the line's byte count is known at every moment, so a line over `max_line_bytes` is rejected
  while it is still arriving: at most `max_line_bytes + 1` bytes are ever held (the `+ 1` is a
  trailing `\\r` that may yet turn out to be half of `\\r\\n`).

U+2028 / U+2029 / U+0085 and every other character `str.splitlines()` would split on are plain
content here. Records are returned verbatim (no stripping); a blank or whitespace-only line (JSON
whitespace: space, tab, CR, LF) is a protocol error, as is every other breach. After an error the
framer is dead: further calls raise `livefill.errors.UsageError`.

Every line returned is an `NDJSONLine`: the line's text (it *is* that `str`, so it compares,
hashes and parses as one) that also knows the byte span `[start, end)` it was cut from, in
absolute stream offsets, without its `\\n` / `\\r\\n`.
"""

from __future__ import annotations

import codecs

from livefill.errors import ProtocolError, UsageError

__all__ = ["NDJSONFramer", "NDJSONLine"]

_JSON_WS = " \t\r\n"


class NDJSONLine(str):
    """A line's text plus `start` / `end`: the byte span it was cut from (terminator excluded)."""

    start: int
    end: int

    def __new__(cls, text: str, start: int, end: int) -> NDJSONLine:
        line = str.__new__(cls, text)
        object.__setattr__(line, "start", start)
        object.__setattr__(line, "end", end)
        return line

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("NDJSONLine is immutable")

    def __reduce__(self) -> tuple[object, ...]:
        return (NDJSONLine, (str(self), self.start, self.end))


class NDJSONFramer:
    """Cut an NDJSON byte stream into lines.

    `feed(data)` returns the lines completed by `data` (decoded, without `\\n` / `\\r\\n`);
    `close()` returns a last record that had no trailing newline. Breaches raise
    `livefill.errors.ProtocolError` from the call that delivers the offending byte.
    """

    def __init__(self, max_line_bytes: int = 16384, *, leading: bytes = b"") -> None:
        if max_line_bytes < 1:
            raise UsageError("max_line_bytes must be at least 1")
        self.max_line_bytes = max_line_bytes
        self._leading = leading  # bytes dropped before a line's first other byte (a relay's keep-alives)
        self._dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._parts: list[str] = []
        self._nbytes = 0  # bytes of the current line so far (no \n)
        self._last_cr = False  # the current line's last byte so far is \r
        self._line_no = 1
        self._offset = 0  # bytes fed so far
        self._line_start = 0  # offset of the current line's first byte
        self._state = "open"  # open | closed | failed

    def feed(self, data: bytes) -> list[NDJSONLine]:
        """Consume `data` (any cut of the byte stream); return the lines it completed."""
        self._check_open("feed")
        lines: list[NDJSONLine] = []
        pos = 0
        base = self._offset
        self._offset += len(data)
        find = data.find
        try:
            while True:
                nl = find(b"\n", pos)
                if nl < 0:
                    if pos < len(data):
                        self._add(data[pos:] if pos else data)
                    break
                self._add(data[pos:nl])
                lines.append(self._finish(eof=False))
                pos = nl + 1
                self._line_start = base + pos
        except ProtocolError:
            self._state = "failed"
            raise
        return lines

    def close(self) -> list[NDJSONLine]:
        """End of stream: return the last record if it had no newline (checked like any other)."""
        self._check_open("close")
        self._state = "closed"
        if self._nbytes == 0:
            return []
        try:
            return [self._finish(eof=True)]
        except ProtocolError:
            self._state = "failed"
            raise

    # -- internals -------------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._state != "open":
            raise UsageError(f"NDJSONFramer.{what}() after {'close()' if self._state == 'closed' else 'an error'}")

    @property
    def at_line_start(self) -> bool:
        """No byte of a line has come since the last one ended (dropped `leading` bytes aside)."""
        return self._nbytes == 0

    @property
    def dropped(self) -> int:
        """`leading` bytes dropped since the last line ended."""
        return self._dropped

    def _add(self, piece: bytes) -> None:
        if self._leading and self._nbytes == 0:
            kept = piece.lstrip(self._leading)
            self._dropped += len(piece) - len(kept)
            self._line_start += len(piece) - len(kept)  # not part of the line, its span or its length
            piece = kept
        if not piece:
            return
        self._nbytes += len(piece)
        self._last_cr = piece[-1] == 0x0D
        limit = self.max_line_bytes
        if self._nbytes > limit and not (self._nbytes == limit + 1 and self._last_cr):
            raise ProtocolError(
                f"NDJSON line {self._line_no} is longer than {limit} bytes (cut off at {self._nbytes})"
            )
        try:
            self._parts.append(self._decoder.decode(piece))
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"NDJSON line {self._line_no} is not valid UTF-8: {exc.reason}") from None

    def _finish(self, *, eof: bool) -> NDJSONLine:
        try:
            tail = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            where = "the stream ended" if eof else "the line ended"
            raise ProtocolError(f"NDJSON line {self._line_no}: {where} inside a multibyte UTF-8 character") from None
        line = "".join(self._parts) + tail if self._parts else tail
        nbytes = self._nbytes
        if not eof and self._last_cr:
            line = line[:-1]
            nbytes -= 1
        if nbytes > self.max_line_bytes:
            raise ProtocolError(f"NDJSON line {self._line_no} is longer than {self.max_line_bytes} bytes")
        if not line.strip(_JSON_WS):
            raise ProtocolError(f"NDJSON line {self._line_no} is blank")
        self._parts.clear()
        self._nbytes = 0
        self._dropped = 0
        self._last_cr = False
        self._decoder.reset()
        self._line_no += 1
        return NDJSONLine(line, self._line_start, self._line_start + nbytes)
