"""The one boundary where the outside world's exceptions become livefill's, and the openers.

`translate_errors` wraps every network call (httpx, httpx2, the anthropic SDK) and raises
livefill.errors instead; `open_httpx` / `open_anthropic` return a `BodyStream` (each network read
as received, `None` at EOF, `aclose()` a real cancel), its size bounded by `bound_body`. The typed
errors themselves are built in `livefill.wire.providers.http_failures`. The mapping and its
reasons: docs/notes/provider-errors.md.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager, suppress
from functools import cache
from typing import Any

import anthropic
import httpx
import httpx2

from livefill.errors import (
    ConnectionLost,
    LivefillError,
    ProtocolError,
    StreamTimeout,
    UsageError,
)
from livefill import switches
from livefill.loopback import is_loopback_url
from livefill.wire.providers import net_backend
from livefill.wire.providers.http_failures import connect_failure, host_of, http_failure

__all__ = [
    "BODY_LIMIT",
    "asyncio_network",
    "BodyStream",
    "bound_body",
    "open_anthropic",
    "open_httpx",
    "prewarm",
    "read_error_body",
    "translate_errors",
]

_TIMEOUTS = (httpx.TimeoutException, httpx2.TimeoutException)
_DECODING = (httpx.DecodingError, httpx2.DecodingError)
_BAD_URL = (httpx.InvalidURL, httpx2.InvalidURL, httpx.UnsupportedProtocol, httpx2.UnsupportedProtocol)
_TRANSPORT = (httpx.TransportError, httpx2.TransportError, OSError)
_MISUSE = (httpx.StreamError, httpx2.StreamError)
_STATUS = (httpx.HTTPStatusError, httpx2.HTTPStatusError)
_ERROR_BODY_LIMIT = 65536
BODY_LIMIT = 64 * 1024 * 1024  # decoded bytes one streamed response may deliver
_ENCODED_SLICE = 1024  # a compressed body is decoded this many raw bytes at a time
_UNWIND_READS = 10_000  # reads of already-buffered data allowed while unwinding a closed body
_UNWIND_SECONDS = 2.0


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" ({cause})"
    return text


def _request_url(exc: BaseException) -> str | None:
    """The URL of the request an httpx / httpx2 / SDK exception belongs to, if it has one."""
    for candidate in (exc, getattr(exc, "response", None)):
        try:
            request = getattr(candidate, "request", None)  # httpx raises RuntimeError when unset
        except RuntimeError:
            request = None
        if request is not None and getattr(request, "url", None) is not None:
            return str(request.url)
    return None


_CONNECT = (httpx.ConnectError, httpx2.ConnectError, anthropic.APIConnectionError, ConnectionRefusedError, socket.gaierror, ssl.SSLError)


@contextmanager
def translate_errors(
    what: str,
    *,
    url: str | None = None,
    model: str | None = None,
    service: str | None = None,
    secret: str | None = None,
) -> Iterator[None]:
    """Re-raise foreign exceptions from the block as livefill.errors; `what` names the operation.

    With `url` (else the URL of the exception's request, when it has one) an HTTP error status
    or a failed connection becomes the typed error whose message is one line naming the host;
    `model` is the model asked for (named by a 404), `service` the server software ("Ollama"),
    `secret` the API key (masked if an error body echoes it)."""
    try:
        yield
    except LivefillError:
        raise
    except anthropic.APIStatusError as exc:
        where = url or _request_url(exc) or what
        body = exc.body if exc.body is not None else (exc.api_message or exc.message)
        raise http_failure(
            exc.status_code, body, url=where, headers=exc.response.headers, model=model, secret=secret
        ) from exc
    except anthropic.APITimeoutError as exc:
        raise StreamTimeout(f"{what}: timed out") from exc
    except _STATUS as exc:
        where = url or _request_url(exc) or what
        try:
            body: Any = exc.response.content
        except (httpx.ResponseNotRead, httpx2.ResponseNotRead):
            body = b""
        raise http_failure(
            exc.response.status_code, body, url=where, headers=exc.response.headers, model=model, secret=secret
        ) from exc
    except (httpx.ConnectTimeout, httpx2.ConnectTimeout) as exc:
        where = url or _request_url(exc)
        if where:
            raise StreamTimeout(f"{host_of(where)} did not accept a connection in time") from exc
        raise StreamTimeout(f"{what}: timed out ({type(exc).__name__})") from exc
    except _CONNECT as exc:
        where = url or _request_url(exc)
        failure = connect_failure(exc, where, service=service) if where else None
        if failure is not None:
            raise failure from exc
        if isinstance(exc, anthropic.APIConnectionError):
            raise ConnectionLost(f"{what}: {_describe(exc.__cause__ or exc)}") from exc
        raise ConnectionLost(f"{what}: {_describe(exc)}") from exc
    except anthropic.AnthropicError as exc:
        raise ProtocolError(f"{what}: {exc}") from exc
    except _TIMEOUTS as exc:
        raise StreamTimeout(f"{what}: timed out ({type(exc).__name__})") from exc
    except _DECODING as exc:
        raise ProtocolError(f"{what}: the body cannot be decoded: {exc}") from exc
    except _BAD_URL as exc:
        raise UsageError(f"{what}: {exc}") from exc
    except _MISUSE as exc:
        raise UsageError(f"{what}: {exc}") from exc
    except _TRANSPORT as exc:
        raise ConnectionLost(f"{what}: {_describe(exc)}") from exc


# --- reading an error body with a cap -----------------------------------------------------------------


async def _unwind(chunks: AsyncIterator[bytes]) -> None:
    # The body is read through a chain of async generators (httpx -> httpcore -> the socket
    # read), and `async for` never closes an inner one: aclose() on the outermost would leave
    # the rest to the garbage collector, which, on a loop without asyncgen hooks (qasync),
    # finalises them outside any task ("async generator ignored GeneratorExit",
    # AsyncLibraryNotFoundError at exit). With the response closed, the next read fails at the
    # bottom of the chain, and that failure unwinds every generator here, in this task.
    with suppress(Exception):
        async with asyncio.timeout(_UNWIND_SECONDS):
            for _ in range(_UNWIND_READS):
                await anext(chunks)
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        with suppress(Exception):
            await aclose()


class _CappedBody:
    """An error response's byte stream that ends after `limit` bytes, closing the rest. With the
    response's content `decoder` (taken over from httpx by `_cap`) the limit counts decoded bytes:
    raw bytes are decoded `_ENCODED_SLICE` at a time and the stream stops at the cap, so a gzip
    bomb on a 500 or a 401 inflates at most ~1 MB at a time, never to hundreds of MB."""

    def __init__(self, inner: Any, limit: int = _ERROR_BODY_LIMIT, decoder: Any = None) -> None:
        self._inner = inner
        self._limit = limit
        self._decoder = decoder

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        left, raw_left, ended, decoder = self._limit, self._limit, False, self._decoder
        try:
            while left > 0 and raw_left > 0:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    ended = True
                    for tail in _decoded(decoder, None) if decoder is not None else ():
                        yield tail[:left]
                        left -= len(tail)
                        if left <= 0:
                            break
                    return
                raw_left -= len(chunk)
                for out in _decoded(decoder, chunk) if decoder is not None else (chunk,):
                    if out:
                        yield out[:left]
                        left -= len(out)
                    if left <= 0:
                        break
        finally:
            if not ended:
                with suppress(Exception):
                    await self._inner.aclose()
                await _unwind(chunks)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _decoded(decoder: Any, raw: bytes | None) -> Iterator[bytes]:
    """`raw` decoded `_ENCODED_SLICE` bytes at a time (None: the decoder's flush), piece by piece:
    httpx's decoders return bytes, httpx2's an iterator of bounded pieces."""
    outs = [decoder.flush()] if raw is None else (
        decoder.decode(raw[i : i + _ENCODED_SLICE]) for i in range(0, len(raw), _ENCODED_SLICE)
    )
    for out in outs:
        yield from ((out,) if isinstance(out, bytes) else out)


class _CappedHttpx(_CappedBody, httpx.AsyncByteStream):
    pass


class _CappedHttpx2(_CappedBody, httpx2.AsyncByteStream):
    pass


def _cap(response: Any) -> None:
    if not isinstance(response.stream, _CappedBody):
        two = isinstance(response, httpx2.Response)
        identity = httpx2._decoders.IdentityDecoder if two else httpx._decoders.IdentityDecoder
        decoder = response._get_content_decoder()  # from content-encoding; the cap decodes instead
        response._decoder = identity()
        capped = _CappedHttpx2 if two else _CappedHttpx
        response.stream = capped(response.stream, decoder=None if isinstance(decoder, identity) else decoder)


async def _cap_error_body(response: Any) -> None:
    """httpx / httpx2 response hook: an error status's body is read at most `_ERROR_BODY_LIMIT`
    bytes (what the SDK reads whole, and what we read, is never a huge body)."""
    if response.status_code >= 400:
        _cap(response)


async def read_error_body(response: Any) -> bytes:
    """The first `_ERROR_BODY_LIMIT` bytes of an unread streaming response's body; the rest is
    never read (the connection is closed)."""
    _cap(response)
    return await response.aread()


class _SlicedBody:
    """A content-encoded response's raw byte stream handed on in `_ENCODED_SLICE`-byte pieces:
    httpx decodes each raw piece whole, so a decompression bomb inflates at most ~1 MB at a time
    (deflate's ratio is bounded near 1032:1) and the decoded-size cap stops it early."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            for start in range(0, len(chunk), _ENCODED_SLICE):
                yield chunk[start : start + _ENCODED_SLICE]

    async def aclose(self) -> None:
        await self._inner.aclose()


class _SlicedHttpx(_SlicedBody, httpx.AsyncByteStream):
    pass


class _SlicedHttpx2(_SlicedBody, httpx2.AsyncByteStream):
    pass


async def bound_body(response: Any, host: str, limit: int = BODY_LIMIT) -> AsyncIterator[bytes]:
    """`response.aiter_bytes()` (content-decoded network reads), ProtocolError "HOST sent more
    than N MB" once the decoded bytes pass `limit`: a hostile or broken server (a gzip bomb, an
    endless body) never makes the client hold more than about `limit`."""
    if response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
        if not isinstance(response.stream, _SlicedBody):
            sliced = _SlicedHttpx2 if isinstance(response, httpx2.Response) else _SlicedHttpx
            response.stream = sliced(response.stream)
    chunks = response.aiter_bytes()
    total, ended = 0, False
    try:
        async for chunk in chunks:
            total += len(chunk)
            if total > limit:
                raise ProtocolError(f"{host} sent more than {_megabytes(limit)} MB in one response")
            yield chunk
        ended = True
    finally:
        if not ended:  # close the response, then unwind httpx's generators here, in this task
            with suppress(Exception):
                await response.aclose()
            await _unwind(chunks)


def asyncio_network(client: Any) -> Any:
    """`client` (httpx or the SDK's httpx2) reading and writing through asyncio's own transports
    (livefill/wire/providers/net_backend.py: no per-read cancel scope, no socket paused after every read).
    LIVEFILL_NET_BACKEND=anyio keeps httpcore's own backend (for comparison, or a proxy it handles
    better)."""
    if switches.text("LIVEFILL_NET_BACKEND") != "anyio":
        net_backend.install(client)
    return client


def _megabytes(limit: int) -> str:
    return f"{limit / (1024 * 1024):g}"


@cache
def _ssl_context() -> ssl.SSLContext:
    # Building a verifying context loads the CA bundle (~50 ms, on the event loop): do it once and
    # share it between every client, httpx's and the SDK's httpx2 alike.
    return httpx.create_ssl_context()


# Modules the SDK and the HTTP stack import lazily on their first request (tens of ms on the
# event loop, so on the GUI thread in the app). `prewarm` imports them ahead of time.
_LAZY_MODULES = (
    "anyio._backends._asyncio",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "httpcore",
    "httpcore2",
    "opentelemetry.propagate",
)


def prewarm() -> None:
    """Do the one-off work of a first request now, in any thread: the shared TLS context, the
    SDK's lazily loaded resources, the HTTP stack's lazily imported modules. Safe to skip."""
    _ssl_context()
    anthropic.AsyncAnthropic(api_key="prewarm", base_url="http://127.0.0.1:9", max_retries=0).messages
    for name in _LAZY_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _check_content_type(headers: Mapping[str, str], expect: tuple[str, ...] | None, what: str) -> None:
    if not expect:
        return
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media not in expect:
        raise ProtocolError(f"{what}: content-type {media or '(none)'!r}, expected {' or '.join(expect)}")


class BodyStream:
    """An open streaming response body. `read()` -> the next network read, or None at EOF."""

    def __init__(self, chunks: AsyncIterator[bytes], stack: AsyncExitStack, what: str, headers: Mapping[str, str]):
        self._chunks = chunks
        self._stack = stack
        self._exhausted = False  # the chunk iterator has finished (EOF or an exception)
        self.what = what
        self.headers = dict(headers)
        self.closed = False

    async def read(self) -> bytes | None:
        """The next chunk as the network delivered it (never empty), or None at EOF."""
        with translate_errors(self.what):
            while True:
                try:
                    chunk = await anext(self._chunks)
                except StopAsyncIteration:
                    self._exhausted = True
                    return None
                except BaseException:
                    self._exhausted = True
                    raise
                if chunk:
                    return chunk

    async def aclose(self) -> None:
        """Close the response (a real cancel if unfinished) and its client. Idempotent."""
        if self.closed:
            return
        self.closed = True
        with translate_errors(self.what):
            try:
                await self._stack.aclose()
            finally:
                if not self._exhausted:
                    await self._unwind()

    async def _unwind(self) -> None:
        self._exhausted = True
        await _unwind(self._chunks)


async def open_httpx(
    url: str,
    *,
    body: Any,
    headers: Mapping[str, str],
    expect: tuple[str, ...] | None,
    what: str,
    service: str | None = None,
    body_limit: int = BODY_LIMIT,
) -> BodyStream:
    """POST `body` as JSON to `url` and return the streaming response body.

    An HTTP error status raises its ProviderHTTPError (with the provider's message; the model
    named is the body's "model"), a connection not made its CannotConnect (`service`: the server
    software the message names, "Ollama"); a content-type not
    in `expect` raises ProtocolError. The body is read with `aiter_bytes()` (network reads, after
    content decoding) — never `aiter_lines()`, which splits on U+2028 — at most `body_limit`
    decoded bytes (`bound_body`).
    """
    model = body.get("model") if isinstance(body, Mapping) and isinstance(body.get("model"), str) else None
    auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
    secret = auth[7:] if auth.lower().startswith("bearer ") else None
    stack = AsyncExitStack()
    try:
        with translate_errors(what, url=url, model=model, service=service, secret=secret):
            client = await stack.enter_async_context(
                asyncio_network(
                    httpx.AsyncClient(
                        timeout=httpx.Timeout(connect=15.0, read=None, write=30.0, pool=15.0),
                        trust_env=not is_loopback_url(url),
                        verify=_ssl_context(),
                        event_hooks={"response": [_cap_error_body]},
                    )
                )
            )
            response = await stack.enter_async_context(client.stream("POST", url, json=body, headers=dict(headers)))
            if response.status_code >= 400:
                raw = await read_error_body(response)
                raise http_failure(response.status_code, raw, url=url, headers=response.headers, model=model, secret=secret)
            _check_content_type(response.headers, expect, what)
            return BodyStream(bound_body(response, host_of(url), body_limit), stack, what, response.headers)
    except BaseException:
        with translate_errors(what, url=url):
            await stack.aclose()
        raise


async def open_anthropic(
    *,
    base_url: str,
    api_key: str,
    params: Mapping[str, Any],
    headers: Mapping[str, str],
    what: str = "Anthropic Messages",
    body_limit: int = BODY_LIMIT,
) -> BodyStream:
    """Open a streaming Messages request through the anthropic SDK and return its raw body.

    `client.messages.with_streaming_response.create(**params)` sends the request and hands back
    the response unread; its raw bytes go to our own SSE decoder, so a wire tap sees every read.
    The SDK's retries are off (a run reports a failure; it does not silently start again).
    """
    model = params.get("model") if isinstance(params.get("model"), str) else None
    stack = AsyncExitStack()
    try:
        with translate_errors(what, url=base_url, model=model, secret=api_key):
            http_client = asyncio_network(
                anthropic.DefaultAsyncHttpxClient(
                    verify=_ssl_context(),
                    trust_env=not is_loopback_url(base_url),
                    timeout=anthropic.Timeout(connect=15.0, read=None, write=30.0, pool=15.0),
                    event_hooks={"response": [_cap_error_body]},
                )
            )
            stack.push_async_callback(http_client.aclose)
            client = anthropic.AsyncAnthropic(
                base_url=base_url,
                api_key=api_key,
                max_retries=0,
                timeout=anthropic.Timeout(connect=15.0, read=None, write=30.0, pool=15.0),
                http_client=http_client,
            )
            stack.push_async_callback(client.close)
            response = await stack.enter_async_context(
                client.messages.with_streaming_response.create(**params, extra_headers=dict(headers))
            )
            http = response.http_response
            _check_content_type(http.headers, ("text/event-stream",), what)
            return BodyStream(bound_body(http, host_of(base_url), body_limit), stack, what, http.headers)
    except BaseException:
        with translate_errors(what, url=base_url):
            await stack.aclose()
        raise
