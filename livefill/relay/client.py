"""The relay's client: `open_relay` POSTs a request and yields a `RelayStream` of checked records.

The IO around `livefill.relay.reader.RecordReader`: status and content type checked, every network
read fed to the reader, a terminal `error` raised as its RunFailure, a body silent too long ended
by the providers' watchdog (livefill.wire.idle). How it reads, and why: docs/notes/relay-client.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from livefill.defaults import IDLE_TIMEOUT
from livefill.errors import ProtocolError, StreamTimeout, UsageError
from livefill.extraction.schemas import resolve_schema
from livefill.loopback import is_loopback_url
from livefill.relay.reader import MAX_RECORDS, RecordReader, failure_from_record
from livefill.relay.records import (
    EXTRACT_PATH,
    KEEPALIVE,
    RECORD_DOCUMENT_HEADER,
    RECORD_HEADER,
    UPSTREAM_KEY_HEADER,
    ErrorRecord,
    RelayRecord,
    StartRecord,
    relay_backstop,
)
from livefill.relay.request import ExtractRequest
from livefill.wire.idle import IdleWatch
from livefill.wire.providers.transport import (
    BODY_LIMIT,
    _ssl_context,
    asyncio_network,
    bound_body,
    host_of,
    http_failure,
    read_error_body,
    translate_errors,
)
from livefill.wire.taps import WireTap

__all__ = ["KEEPALIVE_SPAN", "RelayStream", "open_relay"]

KEEPALIVE_SPAN = 600.0  # seconds after a record that the relay's keep-alives may keep a run going

class RelayStream:
    """The async iterator `open_relay` yields: checked records, ending at `complete`.

    An `error` record is raised as the matching RunFailure (see `failure_from_record`); rule
    breaches as ProtocolError; a body with no terminal as Truncated. `start` is set once the first
    record has arrived.
    """

    def __init__(
        self,
        response: httpx.Response,
        reader: RecordReader,
        tap: WireTap | None,
        watch: IdleWatch | None = None,
        *,
        host: str = "the relay",
        body_limit: int = BODY_LIMIT,
        keepalive_span: float = KEEPALIVE_SPAN,
    ) -> None:
        self._keepalive_span = keepalive_span
        self._response = response
        self._host = host
        self._body_limit = body_limit
        self._reader = reader
        self._tap = tap
        self._watch = watch
        self._iter = self._records()

    @property
    def start(self) -> StartRecord | None:
        return self._reader.start

    def __aiter__(self) -> RelayStream:
        return self

    async def __anext__(self) -> RelayRecord:
        return await self._iter.__anext__()

    async def _records(self) -> AsyncIterator[RelayRecord]:
        reader, tap, watch = self._reader, self._tap, self._watch
        chunks = bound_body(self._response, self._host, self._body_limit)
        loop = asyncio.get_running_loop()
        last_record = loop.time()
        try:
            with translate_errors("relay"):
                while True:
                    try:
                        chunk = await (watch.guard(anext(chunks)) if watch is not None else anext(chunks))
                    except StopAsyncIteration:
                        break
                    if tap is not None:
                        tap.on_read(chunk)
                    records = reader.feed(chunk)
                    if watch is not None:
                        now = loop.time()
                        if records or reader.seen_terminal:
                            watch.touch()
                            last_record = now
                        elif chunk and reader.between_records and not chunk.strip(KEEPALIVE):
                            # the relay's keep-alive: it writes one only while its upstream sends
                            # content not settled yet (its own watchdog polices upstream silence).
                            # Bytes of a record trickled in do not count, nor keep-alives without
                            # end: a relay may not hold a client longer than the span.
                            if now - last_record < self._keepalive_span:
                                watch.touch()
                            else:
                                watch.keepalive()  # its timeout then says "only keep-alives"
                    for record in records:
                        yield record
        finally:
            if watch is not None:
                watch.close()
            # a record that broke a rule leaves the body generator suspended: close it here, in
            # this task (the garbage collector would finalise httpx's generators outside any loop)
            await chunks.aclose()
        (terminal,) = reader.close()
        if isinstance(terminal, ErrorRecord):
            raise failure_from_record(terminal)
        yield terminal

    async def aclose(self) -> None:
        # Close the response first, then let the next read fail inside this task: that unwinds
        # every generator of the httpx chain here, not later in the garbage collector, which on a
        # loop without asyncgen hooks (qasync) prints "async generator ignored GeneratorExit".
        await self._response.aclose()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                while True:
                    await self._iter.__anext__()
        await self._iter.aclose()


@contextlib.asynccontextmanager
async def open_relay(
    base_url: str,
    token: str,
    body: ExtractRequest | Mapping[str, Any],
    *,
    tap: WireTap | None = None,
    timeout: float = 10.0,
    idle_timeout: float | None = relay_backstop(IDLE_TIMEOUT),
    client: httpx.AsyncClient | None = None,
    upstream_key: str | None = None,
    record_path: str | None = None,
    record_document: bool = True,
    body_limit: int = BODY_LIMIT,
    max_records: int = MAX_RECORDS,
    keepalive_span: float = KEEPALIVE_SPAN,
) -> AsyncIterator[RelayStream]:
    """POST `body` to the relay at `base_url` and yield a `RelayStream` of checked records.

    `body` is an `ExtractRequest` (livefill.relay.request), or a mapping sent as it is.

    `upstream_key` hands a live provider's key to the app's *embedded* relay (the
    `x-livefill-upstream-key` header); it is refused (UsageError, nothing sent) unless `base_url`
    is a loopback address — a relay elsewhere reads its own environment.
    `record_path` (an absolute path) asks the embedded relay, over loopback only (UsageError
    otherwise, nothing sent), to write a trace of the provider's wire it reads there (the
    `x-livefill-record` header, percent-encoded; `record_document` False: only the document's hash).

    `token` is the relay's bearer token. `timeout` bounds connecting; `idle_timeout` (None: no
    limit) bounds the wait for the response and every stretch with no record, with the same
    watchdog as the provider streams (livefill.wire.idle) — the relay itself turns an idle upstream into an
    `error` `timeout` record, so this is a backstop: by default `relay_backstop` of the relay's
    default limit, so that the relay's verdict comes first. The relay's keep-alives (spaces between
    records, written while its upstream writes a long value) count as records for at most
    `keepalive_span` seconds after the last record; bytes of a record trickled in never do.
    A non-200 answer raises its ProviderHTTPError (a wrong token: KeyRefused) with the relay's
    message and `.status`, its body read at most 64 KB; a relay that cannot be reached raises its
    CannotConnect ("start the server, …: nothing is listening at http://..."). Leaving the
    context closes the response. `client` lets the caller share a connection pool. A response is
    read at most `body_limit` decoded bytes and `max_records` records (ProtocolError past either).

    `body["schema"]` is a bundled schema's name or a JSON Schema object (docs/relay-v1.md's body, plus an
    inline schema: `{"schema": {"type": "object", "properties": {…}}, "document": "…"}`); an
    inline one is read here first (livefill.extraction.user_schema: a SchemaError names what livefill cannot
    use before anything is sent) and the records are checked against the model made from it.
    """
    if isinstance(body, ExtractRequest):
        body = body.to_json()
    schema_name, schema = _requested_schema(body)
    mode = body.get("mode", "settled") if isinstance(body.get("mode", "settled"), str) else None
    reader = RecordReader(schema=schema, schema_name=schema_name, mode=mode, max_records=max_records, tap=tap)
    url = base_url.rstrip("/") + EXTRACT_PATH
    headers = {"authorization": f"Bearer {token}", "accept": "application/x-ndjson"}
    if upstream_key is not None:
        if not is_loopback_url(base_url):
            raise UsageError("an API key is handed only to the app's embedded relay, over loopback")
        headers[UPSTREAM_KEY_HEADER] = upstream_key
    if record_path is not None:
        if not is_loopback_url(base_url):
            raise UsageError("a relay deployed on its own cannot record; record in partial mode")
        headers[RECORD_HEADER] = quote(os.path.abspath(record_path), safe="/:\\")
        if not record_document:
            headers[RECORD_DOCUMENT_HEADER] = "0"
    limits = httpx.Timeout(timeout, read=None)
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            client = await stack.enter_async_context(asyncio_network(httpx.AsyncClient(timeout=limits, verify=_ssl_context())))
        with translate_errors("relay", url=url):
            request = client.build_request("POST", url, json=dict(body), headers=headers, timeout=limits)
            try:
                async with asyncio.timeout(idle_timeout):
                    response = await client.send(request, stream=True)
            except TimeoutError:
                raise StreamTimeout(f"relay: no response within {idle_timeout:g} s") from None
        stack.push_async_callback(response.aclose)
        if response.status_code != 200:
            with translate_errors("relay", url=url):
                detail = await read_error_body(response)
            raise http_failure(response.status_code, detail, url=url, headers=response.headers, secret=token)
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/x-ndjson":
            raise ProtocolError(f"relay answered with content-type {ctype!r}, not application/x-ndjson")
        watch = IdleWatch(idle_timeout, "relay") if idle_timeout is not None else None
        stream = RelayStream(response, reader, tap, watch, host=host_of(url), body_limit=body_limit,
                             keepalive_span=keepalive_span)
        try:
            yield stream
        finally:
            await stream.aclose()


def _requested_schema(body: Mapping[str, Any]) -> tuple[str | None, type[BaseModel] | None]:
    """The schema name the `start` record must carry, and the model of an inline schema."""
    spec = body.get("schema")
    if isinstance(spec, str):
        return spec, None
    if isinstance(spec, Mapping):
        source = resolve_schema(spec)
        return source.name, source.model
    return None, None
