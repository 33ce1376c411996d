"""The unframed wire: `POST /raw/v1/extract`, the JSON document alone over a chunked body.

The request body is the document (plain text), or a JSON object `{"document": ..., "schema": ...}`.
The response is `application/json` with no framing at all: each token is one write, and the end of
the body is the only terminal there is, so a cut-off stream looks exactly like a finished one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from livefill.demo.protocol import HTTP_FAULTS, FaultName
from livefill.demo.wires import SERVER_ERROR, ParsedRequest, Refusal, StopKind, Tokens, dumps


class RawStream:
    """Bytes of one unframed response."""

    pings_while_streaming = False

    def preamble(self) -> list[bytes]:
        return []

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]:
        for piece in pieces:
            yield Tokens(data=piece.encode(), count=1)

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]:
        return []

    def error_frame(self) -> bytes:  # pragma: no cover - refused before streaming
        raise NotImplementedError("the unframed wire has no error frame")

    def keepalive(self) -> bytes | None:
        return None


class RawWire:
    """The unframed wire's request parsing (the body is the document) and error shape."""

    name = "raw"
    content_type = "application/json"
    server_error = SERVER_ERROR

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        if isinstance(body, Mapping) and isinstance(body.get("document"), str):
            text = body["document"]
        elif isinstance(body, str):
            text = body
        else:
            text = ""
        return ParsedRequest(user_text=text, model="raw", stream=True, as_text=True)

    def encode(self, body: Any) -> bytes:
        return dumps(body).encode()

    def error_body(self, kind: str, message: str, request_id: str) -> Any:
        return {"error": {"type": kind, "message": message}}

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal:
        status = HTTP_FAULTS[fault]
        body = self.error_body(f"http_{status}", f"the demo provider refused the request ({fault.value})", request_id)
        return Refusal(status=status, body=body, headers=Refusal.headers_for(status))

    def response_headers(self, request_id: str) -> list[tuple[str, str]]:
        return [("x-request-id", request_id)]

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> RawStream:
        return RawStream()

    def complete(
        self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int
    ) -> Any:  # pragma: no cover - the raw wire always streams
        return json.loads(text)
