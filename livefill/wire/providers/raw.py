"""The unframed wire: one JSON document over a chunked body, no event framing at all (sans-IO).

How this works
--------------
`RawFramer` only decodes UTF-8 incrementally (strictly: bad bytes, or a stream that ends inside
a character, are protocol errors); its "frames" are whatever text each network read carried,
each an `NDJSONLine` (text plus the byte span it was decoded from: the decoding is strict, so the
span is exactly the text's UTF-8 encoding).
`RawDecoder` turns every non-empty piece into an `ArgsDelta`; EOF is the terminal, so `close()`
returns `BlockStop` + `Stop(COMPLETE)`. Nothing on this wire can say "I was cut off", which is the
point of showing it: a dropped connection mid-body is only noticed by the transport.
"""

from __future__ import annotations

import codecs
from typing import Any

from livefill.errors import ProtocolError
from livefill.wire.ndjson import NDJSONLine
from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason, StreamEvent
from livefill.wire.providers.request import ExtractionRequest

__all__ = ["RawDecoder", "RawFramer", "raw_body"]


class RawFramer:
    """bytes -> text pieces, decoded incrementally and strictly."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._offset = 0  # bytes of text handed out so far

    def feed(self, data: bytes) -> list[NDJSONLine]:
        try:
            text = self._decoder.decode(data)
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"unframed body is not valid UTF-8: {exc.reason}") from None
        if not text:
            return []
        start = self._offset
        self._offset += len(text) if text.isascii() else len(text.encode("utf-8"))
        return [NDJSONLine(text, start, self._offset)]

    def close(self) -> list[NDJSONLine]:
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ProtocolError("unframed body ended inside a multibyte UTF-8 character") from None
        return []


class RawDecoder:
    """Every text piece is an `ArgsDelta`; `close()` (EOF) is the terminal."""

    def __init__(self) -> None:
        self.finished = False
        self.carriers: list[str | None] = []  # the delta is the frame's text itself

    def feed(self, text: str) -> list[StreamEvent]:
        if self.finished:
            raise ProtocolError("unframed text after the end of the body")
        self.carriers = [None] if text else []
        return [ArgsDelta(text=str(text))] if text else []  # a plain str, not the framer's NDJSONLine

    def close(self) -> list[StreamEvent]:
        if self.finished:
            return []
        self.finished = True
        return [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="eof")]


def raw_body(request: ExtractionRequest) -> dict[str, Any]:
    """The demo provider's unframed endpoint body: `{"schema", "document"}`."""
    return {"schema": request.schema_name, "document": request.document}
