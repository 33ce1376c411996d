"""The vocabulary layer and its clients: open a provider's stream, get unified stream events.

    request = ExtractionRequest(provider="anthropic", base_url=url, schema=resolve_schema("invoice"), document=text)
    async with open_stream(request) as events:
        async for event in events:          # ArgsDelta, TextDelta, BlockStop, Stop, KeepAlive
            ...

How this works
--------------
Each provider is a `_Wire`: an opener (livefill/wire/providers/transport.py: the anthropic SDK for
Anthropic, httpx for the rest) that sends the real API's request shape and returns the raw
response body; a framer (SSE, NDJSON, or plain UTF-8 for the unframed wire); and a sans-IO
vocabulary decoder (one module per wire), made for the request (an OpenAI-compatible server
asked for json_schema / json_object output streams the JSON as message text, which the Chat
decoder then hands out as ArgsDelta). "openai-compatible" is the Chat wire at any base URL
(llama.cpp, vLLM, LM Studio, Ollama's /v1, gateways), with an optional key. `EventStream` pulls one network read at a time,
frames it, decodes the frames, and hands out the events, telling an optional `livefill.wire.taps.WireTap`
about every read, frame (with its byte span and where each delta's text sits in it) and event.

Failures are raised as livefill.errors, after the events that arrived before them:
`UpstreamError` (an HTTP error status, or the provider's error event/line — its ProviderError is
shown to the tap, then raised), `Truncated` (EOF before the wire's terminal), `ConnectionLost`,
`ProtocolError` (bytes or frames that break the wire), and `StreamTimeout` when nothing but
KeepAlive (or nothing at all) arrived for `idle_timeout` seconds. A `Stop(LENGTH)` is yielded,
not raised: the consumer decides. After the terminal the body is still read to its end, and
anything more than the terminal is a protocol error. Leaving the `async with` closes the
response: an unfinished one is a real cancel that the server sees as a disconnect — except that
a consumer leaving right after `Stop` first lets the wire's closing frames (`[DONE]`, ...) arrive.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from livefill.defaults import IDLE_TIMEOUT
from livefill.errors import LivefillError, ProtocolError, StreamTimeout, UpstreamError
from livefill.wire.events import KeepAlive, ProviderError, Stop, StreamEvent
from livefill.wire.idle import IdleWatch as _IdleWatch
from livefill.wire.ndjson import NDJSONFramer
from livefill.wire.providers import anthropic as _anthropic
from livefill.wire.providers import ollama as _ollama
from livefill.wire.providers import openai_chat as _chat
from livefill.wire.providers import openai_responses as _responses
from livefill.wire.providers import raw as _raw
from livefill.wire.providers.base import Decoder
from livefill.wire.providers.request import PROVIDERS, ExtractionRequest
from livefill.wire.sse import SSEDecoder
from livefill.wire.taps import WireFrame, WireTap, sse_frame, text_frame

if TYPE_CHECKING:
    from livefill.wire.providers.transport import BodyStream


def open_anthropic(**kwargs: Any) -> Awaitable[BodyStream]:
    # The HTTP stack and the SDKs (seconds of imports) load with the first request, or earlier in
    # a warm-up thread (transport.prewarm), never with this package: an app can show its window first.
    from livefill.wire.providers.transport import open_anthropic as opener  # lazy: the SDKs and HTTP stack (4150 ms)

    return opener(**kwargs)


def open_httpx(url: str, **kwargs: Any) -> Awaitable[BodyStream]:
    from livefill.wire.providers.transport import open_httpx as opener  # lazy: the SDKs and HTTP stack (4150 ms)

    return opener(url, **kwargs)

__all__ = ["EventStream", "open_stream"]


class _Framer(Protocol):
    def feed(self, data: bytes) -> list[Any]: ...

    def close(self) -> list[Any]: ...


def _ndjson_frame(line: Any, carriers: tuple[str | None, ...]) -> WireFrame:
    return text_frame("ndjson", line, carriers)


def _raw_frame(text: Any, carriers: tuple[str | None, ...]) -> WireFrame:
    return text_frame("raw", text, carriers)


@dataclass(frozen=True, slots=True)
class _Wire:
    open: Callable[[ExtractionRequest], Awaitable[BodyStream]]
    framer: Callable[[], _Framer]
    decoder: Callable[[ExtractionRequest | None], Decoder]  # None: the wire's defaults
    frame: Callable[[Any, tuple[str | None, ...]], WireFrame]  # what the tap is told


def _bearer(request: ExtractionRequest) -> dict[str, str]:
    # No key (an OpenAI-compatible server that needs none): no Authorization header at all.
    auth = {"authorization": f"Bearer {request.api_key}"} if request.api_key else {}
    return {**auth, **request.demo_headers}


async def _open_anthropic(request: ExtractionRequest) -> BodyStream:
    return await open_anthropic(
        base_url=request.base_url,
        api_key=request.api_key,
        params=_anthropic.message_params(request),
        headers=_anthropic.request_headers(request),
    )


async def _open_chat(request: ExtractionRequest) -> BodyStream:
    """The Chat Completions wire, OpenAI's own or an OpenAI-compatible server's."""
    compatible = request.provider == "openai-compatible"
    return await open_httpx(
        request.url("/v1/chat/completions"),
        body=_chat.chat_body(request),
        headers={"accept": "text/event-stream", **_bearer(request)},
        expect=("text/event-stream",),
        what=f"the OpenAI-compatible server at {request.base_url}" if compatible else "OpenAI Chat Completions",
    )


async def _open_responses(request: ExtractionRequest) -> BodyStream:
    return await open_httpx(
        request.url("/v1/responses"),
        body=_responses.responses_body(request),
        headers={"accept": "text/event-stream", **_bearer(request)},
        expect=("text/event-stream",),
        what="OpenAI Responses",
    )


async def _open_ollama(request: ExtractionRequest) -> BodyStream:
    return await open_httpx(
        request.url("/api/chat"),
        body=_ollama.chat_body(request),
        headers={**_ollama_auth(request), **request.demo_headers},
        expect=("application/x-ndjson",),
        what="Ollama chat",
        service="Ollama",
    )


def _ollama_auth(request: ExtractionRequest) -> dict[str, str]:
    # Ollama takes no key; a proxy in front of it (or ollama.com) may take a bearer token.
    key = request.api_key
    return {"authorization": f"Bearer {key}"} if key and key not in ("demo", "ollama") else {}


async def _open_raw(request: ExtractionRequest) -> BodyStream:
    return await open_httpx(
        request.url("/raw/v1/extract"),
        body=_raw.raw_body(request),
        headers=dict(request.demo_headers),
        expect=None,
        what="unframed extract",
    )


def _chat_decoder(request: ExtractionRequest | None) -> Decoder:
    return _chat.ChatDecoder(json_mode=request is not None and request.json_mode)


def _responses_decoder(request: ExtractionRequest | None) -> Decoder:
    # With a function tool the JSON comes as its arguments and any output text is prose.
    return _responses.ResponsesDecoder(json_mode=request is None or request.structured == "json_schema")


_WIRES: dict[str, _Wire] = {
    "anthropic": _Wire(_open_anthropic, SSEDecoder, lambda r: _anthropic.AnthropicDecoder(), sse_frame),
    "openai-chat": _Wire(_open_chat, SSEDecoder, _chat_decoder, sse_frame),
    "openai-responses": _Wire(_open_responses, SSEDecoder, _responses_decoder, sse_frame),
    "openai-compatible": _Wire(_open_chat, SSEDecoder, _chat_decoder, sse_frame),
    "ollama": _Wire(_open_ollama, NDJSONFramer, lambda r: _ollama.OllamaDecoder(), _ndjson_frame),
    "raw": _Wire(_open_raw, _raw.RawFramer, lambda r: _raw.RawDecoder(), _raw_frame),
}
assert tuple(_WIRES) == PROVIDERS

_DRAIN_AFTER_STOP = 2.0  # seconds a consumer that left at Stop waits for the body's last bytes


class EventStream:
    """The async iterator `open_stream` yields: unified events, in order, then the end or a failure."""

    def __init__(
        self,
        body: BodyStream,
        wire: _Wire,
        *,
        tap: WireTap | None,
        idle_timeout: float | None,
        request: ExtractionRequest | None = None,
    ) -> None:
        self._body = body
        self._wire = wire
        self._framer = wire.framer()
        self._decoder = wire.decoder(request)
        self._tap = tap
        self._queue: deque[StreamEvent] = deque()
        self._failure: BaseException | None = None
        self._eof = False
        self._stopped = False
        self._watch = _IdleWatch(idle_timeout, body.what) if idle_timeout is not None else None

    @property
    def headers(self) -> dict[str, str]:
        """The response's headers (as the transport gave them)."""
        return dict(self._body.headers)

    @property
    def pending(self) -> bool:
        """More events of the read the last one came from are queued (a run tells its counts once, after them)."""
        return bool(self._queue)

    @property
    def finished(self) -> bool:
        """True once the wire's terminal arrived (the body may still be read to its end)."""
        return self._decoder.finished

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._queue:
            if self._failure is not None:
                raise self._failure
            if self._eof:
                raise StopAsyncIteration
            await self._pull()
        return self._queue.popleft()

    async def _pull(self) -> None:
        try:
            chunk = await self._read()
            if chunk is None:
                self._eof = True
                self._take(self._framer.close())
                self._events(self._decoder.close())
            else:
                if self._tap is not None:
                    self._tap.on_read(chunk)
                self._take(self._framer.feed(chunk))
        except LivefillError as exc:
            self._eof = True
            self._failure = exc
        if self._eof and self._watch is not None:
            self._watch.close()

    def _close(self) -> None:
        if self._watch is not None:
            self._watch.close()

    async def _drain(self, limit: float) -> None:
        """After Stop: read the rest of the body (the wire's closing frames) for up to `limit` s,
        so a consumer that stops at Stop does not look like a cancel to the server."""
        if not self._stopped or self._eof:
            return
        with suppress(LivefillError, TimeoutError):
            async with asyncio.timeout(limit):
                while not self._eof:
                    await self._pull()

    async def _read(self) -> bytes | None:
        if self._watch is None:
            return await self._body.read()
        return await self._watch.guard(self._body.read())

    def _take(self, frames: list[Any]) -> None:
        tap = self._tap
        for frame in frames:
            if tap is None:
                self._events(self._decoder.feed(frame))
                continue
            try:
                events = self._decoder.feed(frame)
            except BaseException:
                tap.on_frame(self._wire.frame(frame, ()))  # the frame that broke the wire is shown
                raise
            tap.on_frame(self._wire.frame(frame, tuple(self._decoder.carriers)))
            self._events(events)

    def _events(self, events: list[StreamEvent]) -> None:
        for event in events:
            if self._tap is not None:
                self._tap.on_event(event)
            if isinstance(event, ProviderError):
                raise UpstreamError(f"{self._body.what}: {event.kind}: {event.message}", kind=event.kind)
            if self._stopped:
                raise ProtocolError(f"{self._body.what}: {type(event).__name__} after the stream's Stop")
            if not isinstance(event, KeepAlive):
                if self._watch is not None:
                    self._watch.touch()
                self._stopped = isinstance(event, Stop)
            elif self._watch is not None:
                self._watch.keepalive()
            self._queue.append(event)


@asynccontextmanager
async def open_stream(
    request: ExtractionRequest, *, tap: WireTap | None = None, idle_timeout: float | None = IDLE_TIMEOUT
) -> AsyncIterator[EventStream]:
    """Open `request`'s stream; yield an async iterator of StreamEvents; close it on leaving.

    The request is sent (and its response headers awaited) on entering, so HTTP error statuses
    and refused connections raise here as UpstreamError / ConnectionLost. `idle_timeout` (None:
    no limit) bounds both the wait for the response and every stretch with no content event.
    """
    wire = _WIRES[request.provider]
    if idle_timeout is None:
        body = await wire.open(request)
    else:
        try:
            async with asyncio.timeout(idle_timeout):
                body = await wire.open(request)
        except TimeoutError:
            raise StreamTimeout(f"{request.provider}: no response within {idle_timeout:g} s") from None
    stream = EventStream(body, wire, tap=tap, idle_timeout=idle_timeout, request=request)
    try:
        yield stream
    except BaseException:
        stream._close()
        with suppress(LivefillError):
            await body.aclose()
        raise
    else:
        await stream._drain(_DRAIN_AFTER_STOP)
        stream._close()
        await body.aclose()
