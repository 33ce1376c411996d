"""The one boundary where the outside world's exceptions become livefill's (core/errors.py).

How this works
--------------
`translate_errors(what)` wraps every call that touches the network — opening a request, each
read of the body, closing it — and maps httpx, httpx2 (what the SDKs use inside) and anthropic
exceptions onto core.errors:

    HTTP error status (httpx / anthropic APIStatusError)   -> UpstreamError(status=..., kind=...)
    timeouts (httpx ReadTimeout, anthropic APITimeoutError) -> StreamTimeout
    connect / read / write errors, a peer that closed the
    connection mid-body (RemoteProtocolError), OSError     -> ConnectionLost
    a body that cannot be content-decoded, any other SDK
    complaint about what the server sent                  -> ProtocolError
    an invalid URL, a stream read twice                    -> UsageError

Nothing above this module catches a foreign exception. The openers return a `BodyStream`: an open
streaming response whose `read()` hands back each network read as received (after content
decoding), `None` at EOF, and whose `aclose()` closes the response and its client. Closing an
unfinished HTTP/1.1 response closes its TCP connection, so the server sees the disconnect.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager, suppress
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx
import httpx2

from core.errors import (
    ConnectionLost,
    LivefillError,
    ProtocolError,
    StreamTimeout,
    UpstreamError,
    UsageError,
)

__all__ = ["BodyStream", "open_anthropic", "open_httpx", "translate_errors"]

_TIMEOUTS = (httpx.TimeoutException, httpx2.TimeoutException)
_DECODING = (httpx.DecodingError, httpx2.DecodingError)
_BAD_URL = (httpx.InvalidURL, httpx2.InvalidURL, httpx.UnsupportedProtocol, httpx2.UnsupportedProtocol)
_TRANSPORT = (httpx.TransportError, httpx2.TransportError, OSError)
_MISUSE = (httpx.StreamError, httpx2.StreamError)
_STATUS = (httpx.HTTPStatusError, httpx2.HTTPStatusError)
_ERROR_BODY_LIMIT = 65536
_UNWIND_READS = 10_000  # reads of already-buffered data allowed while unwinding a closed body
_UNWIND_SECONDS = 2.0


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" ({cause})"
    return text


@contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """Re-raise foreign exceptions from the block as core.errors; `what` names the operation."""
    try:
        yield
    except LivefillError:
        raise
    except anthropic.APIStatusError as exc:
        message = exc.api_message or exc.message
        raise UpstreamError(
            f"{what}: HTTP {exc.status_code}: {message}", kind=str(exc.type or "http_error"), status=exc.status_code
        ) from exc
    except anthropic.APITimeoutError as exc:
        raise StreamTimeout(f"{what}: timed out") from exc
    except anthropic.APIConnectionError as exc:
        raise ConnectionLost(f"{what}: {_describe(exc.__cause__ or exc)}") from exc
    except anthropic.AnthropicError as exc:
        raise ProtocolError(f"{what}: {exc}") from exc
    except _STATUS as exc:
        status = exc.response.status_code
        raise UpstreamError(f"{what}: HTTP {status}", kind="http_error", status=status) from exc
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


def error_from_body(status: int, body: bytes, what: str) -> UpstreamError:
    """An UpstreamError for an HTTP error status, with the provider's message if the body has one.

    Understands `{"error": {"message", "type"|"code"}}` (OpenAI, Anthropic), `{"error": "..."}`
    (Ollama) and plain text.
    """
    text = body.decode("utf-8", errors="replace").strip()
    kind, message = "http_error", text[:500]
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            kind = str(error.get("type") or error.get("code") or kind)
            message = str(error.get("message") or message)
        elif isinstance(error, str):
            message = error
    return UpstreamError(f"{what}: HTTP {status}: {message}" if message else f"{what}: HTTP {status}", kind=kind, status=status)


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
    import importlib

    _ssl_context()
    anthropic.AsyncAnthropic(api_key="prewarm", base_url="http://127.0.0.1:9", max_retries=0).messages
    for name in _LAZY_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


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
        # The body is read through a chain of async generators (httpx -> httpcore -> the socket
        # read), and `async for` never closes an inner one: aclose() on the outermost would leave
        # the rest to the garbage collector, which, on a loop without asyncgen hooks (qasync),
        # finalises them outside any task ("async generator ignored GeneratorExit",
        # AsyncLibraryNotFoundError at exit). With the response closed, the next read fails at the
        # bottom of the chain, and that failure unwinds every generator here, in this task.
        self._exhausted = True
        with suppress(Exception):
            async with asyncio.timeout(_UNWIND_SECONDS):
                for _ in range(_UNWIND_READS):
                    await anext(self._chunks)
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:
            with suppress(Exception):
                await aclose()


async def open_httpx(
    url: str,
    *,
    body: Any,
    headers: Mapping[str, str],
    expect: tuple[str, ...] | None,
    what: str,
) -> BodyStream:
    """POST `body` as JSON to `url` and return the streaming response body.

    An HTTP error status raises UpstreamError (with the provider's message); a content-type not
    in `expect` raises ProtocolError. The body is read with `aiter_bytes()` (network reads, after
    content decoding) — never `aiter_lines()`, which splits on U+2028.
    """
    stack = AsyncExitStack()
    try:
        with translate_errors(what):
            client = await stack.enter_async_context(
                httpx.AsyncClient(
                    timeout=httpx.Timeout(connect=15.0, read=None, write=30.0, pool=15.0),
                    trust_env=not _is_loopback(url),
                    verify=_ssl_context(),
                )
            )
            response = await stack.enter_async_context(client.stream("POST", url, json=body, headers=dict(headers)))
            if response.status_code >= 400:
                raw = b""
                async for chunk in response.aiter_bytes():  # to the end: no generator left behind
                    if len(raw) < _ERROR_BODY_LIMIT:
                        raw += chunk
                raise error_from_body(response.status_code, raw[:_ERROR_BODY_LIMIT], what)
            _check_content_type(response.headers, expect, what)
            return BodyStream(response.aiter_bytes(), stack, what, response.headers)
    except BaseException:
        with translate_errors(what):
            await stack.aclose()
        raise


async def open_anthropic(
    *,
    base_url: str,
    api_key: str,
    params: Mapping[str, Any],
    headers: Mapping[str, str],
    what: str = "Anthropic Messages",
) -> BodyStream:
    """Open a streaming Messages request through the anthropic SDK and return its raw body.

    `client.messages.with_streaming_response.create(**params)` sends the request and hands back
    the response unread; its raw bytes go to our own SSE decoder, so a wire tap sees every read.
    The SDK's retries are off (a run reports a failure; it does not silently start again).
    """
    stack = AsyncExitStack()
    try:
        with translate_errors(what):
            http_client = anthropic.DefaultAsyncHttpxClient(
                verify=_ssl_context(),
                trust_env=not _is_loopback(base_url),
                timeout=anthropic.Timeout(connect=15.0, read=None, write=30.0, pool=15.0),
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
            return BodyStream(http.aiter_bytes(), stack, what, http.headers)
    except BaseException:
        with translate_errors(what):
            await stack.aclose()
        raise
