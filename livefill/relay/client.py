"""Read a livefill relay v1 stream: httpx streaming + the strict NDJSON framer + the record union.

How this works
--------------
`RecordReader` is the sans-IO part: bytes in, checked records out. It cuts lines with
`livefill.wire.ndjson.NDJSONFramer` (strict: blank lines, lines over 16,384 bytes, bad UTF-8 are protocol
errors), parses each line into one of the record models of `livefill.relay.records` (unknown types
and extra fields are protocol errors) and enforces every client rule of docs/relay-v1.md:

    seq starts at 0 and rises by exactly 1; the first record is `start`, and only the first
    `field` / `item` / `delta` pointers must be places the schema has (`item`: an array;
    `delta`: a prose field, and only when the run asked for hybrid mode)
    a `field` sets its pointer once; the `item`s of an array come once each, index 0, 1, 2 …
    exactly one terminal (`complete` or `error`), and it is the last line: the reader holds the
    terminal back until EOF (`close()`), so nothing that follows it can slip past
    a body that ends without a terminal -> `livefill.errors.Truncated`
    the last line must end in "\\n"

`open_relay` is the IO part: it POSTs the request, checks the status and content type, feeds every
network read to a RecordReader and yields the records. A terminal `complete` is yielded, then the
iterator ends. A terminal `error` is NOT yielded: it is raised as the matching
`livefill.errors.RunFailure` subclass (`failure_from_record`), carrying the record's message and
pointer, with the record itself as `.record`. Rule breaches raise `livefill.errors.ProtocolError`.
Transport failures are translated at the project's one boundary,
`livefill.wire.providers.transport.translate_errors` (connection failures -> ConnectionLost); a body with no
record for `idle_timeout` seconds -> StreamTimeout (livefill.wire.idle, the providers' watchdog). Leaving the context closes the HTTP
response (a real cancel: the relay sees the disconnect and cancels its upstream).

`RecordAssembler` rebuilds the extracted object from records (fields set at their pointers, items
placed at their indices, prose deltas kept as drafts), for callers that want the value.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
from pydantic import BaseModel

from livefill.extraction import pointer as jp
from livefill.errors import ProtocolError, RunFailure, StreamTimeout, Truncated, UsageError, failure_for
from livefill.wire.idle import IdleWatch
from livefill.extraction.modes import parse_mode
from livefill.loopback import is_loopback_url
from livefill.wire.ndjson import NDJSONFramer
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
from livefill.extraction.schema import NodeKind, SchemaIndex
from livefill.relay.request import ExtractRequest
from livefill.relay.records import (
    KEEPALIVE,
    EXTRACT_PATH,
    MAX_LINE_BYTES,
    RECORD_DOCUMENT_HEADER,
    RECORD_HEADER,
    UPSTREAM_KEY_HEADER,
    CompleteRecord,
    DeltaRecord,
    ErrorRecord,
    FieldRecord,
    ItemRecord,
    StartRecord,
    parse_record,
)
from livefill.extraction.schemas import SCHEMAS
from livefill.wire.taps import WireTap, text_frame

__all__ = [
    "EXTRACT_PATH",
    "RecordAssembler",
    "RecordReader",
    "RelayStream",
    "failure_from_record",
    "open_relay",
]



def failure_from_record(record: ErrorRecord) -> RunFailure:
    """The RunFailure an `error` record stands for (`.code`, `.message`, `.pointer`, `.record`).

    An `upstream_error` keeps the record's message as it is: the relay wrote the upstream's one
    line ("the key was refused by api.anthropic.com (401 ...)"), and the client shows that line."""
    text = record.message
    if record.pointer and text.startswith(f"{record.pointer}: "):  # said once, by the failure's own "at /amount"
        text = text[len(record.pointer) + 2:]
    message = text if record.code == "upstream_error" else f"relay: {text}"
    failure = failure_for(record.code, message, record.pointer)
    failure.record = record  # type: ignore[attr-defined]
    return failure


# --- sans-IO reader ---------------------------------------------------------------------------------


MAX_RECORDS = 20_000  # records one relay response may carry (a form has far fewer values)
KEEPALIVE_SPAN = 600.0  # seconds after a record that the relay's keep-alives may keep a run going


class RecordReader:
    """Bytes of a relay v1 response in, checked records out (see the module docstring).

    `schema` / `schema_name`: what the request asked for; the `start` record must name the same
    schema (when neither is given, the schema `start` names must be one of livefill.extraction.schemas.SCHEMAS).
    `mode`: the requested mode; `delta` records are illegal unless it is "hybrid" (None: allowed).
    `max_records`: a response with more records is a ProtocolError (a hostile relay's endless
    valid items never pile up). `feed(data)` returns every record completed by `data` except a terminal, which `close()`
    returns once the body has ended with nothing after it.
    """

    def __init__(
        self,
        *,
        schema: type[BaseModel] | None = None,
        schema_name: str | None = None,
        mode: str | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_records: int = MAX_RECORDS,
        tap: WireTap | None = None,
    ) -> None:
        self._framer = NDJSONFramer(max_line_bytes, leading=KEEPALIVE)  # keep-alives are no part of a line
        self._max_records = max_records
        self._schema = schema
        self._schema_name = schema_name
        self._mode = mode
        self._tap = tap
        self._index: SchemaIndex | None = None
        self._next_seq = 0
        self._fields: set[str] = set()  # pointers a `field` record has set
        self._items: dict[str, int] = {}  # array pointer -> the next item index due
        self._terminal: CompleteRecord | ErrorRecord | None = None
        self._closed = False
        self.start: StartRecord | None = None

    @property
    def seen_terminal(self) -> bool:
        return self._terminal is not None

    @property
    def between_records(self) -> bool:
        """No record is part-way in: what came since the last record is keep-alives, or nothing."""
        return self._framer.at_line_start

    def feed(self, data: bytes) -> list[Any]:
        """Records completed by `data`, terminal held back; ProtocolError on any breach."""
        if self._closed:
            raise UsageError("RecordReader.feed() after close()")
        if not data:
            return []
        if self._terminal is not None:
            raise ProtocolError(f"data after the terminal {self._terminal.type!r} record")
        out: list[Any] = []
        for line in self._framer.feed(data):
            out.append(self._take(line))
        if self._terminal is not None and self._framer.dropped:
            raise ProtocolError(f"data after the terminal {self._terminal.type!r} record: a keep-alive")
        return [r for r in out if r is not None]

    def close(self) -> list[Any]:
        """End of body: `[terminal]`; Truncated if there was none, ProtocolError on a breach."""
        if self._closed:
            raise UsageError("RecordReader.close() called twice")
        self._closed = True
        try:
            tail = self._framer.close()
        except ProtocolError as exc:
            if self._terminal is not None:
                raise ProtocolError(f"data after the terminal {self._terminal.type!r} record ({exc})") from None
            raise
        if tail and self._terminal is not None:
            raise ProtocolError(f"data after the terminal {self._terminal.type!r} record: {tail[0][:80]!r}")
        if tail:
            raise ProtocolError(f"the last line has no newline: {tail[0][:80]!r}")
        if self._terminal is None:
            if self.start is None:
                raise Truncated("the relay's response ended before any record")
            raise Truncated("the relay's response ended without a terminal record")
        return [self._terminal]

    def _take(self, line: str) -> Any:
        if self._tap is not None:
            self._tap.on_frame(text_frame("ndjson", line))
        if self._terminal is not None:
            raise ProtocolError(f"a record after the terminal {self._terminal.type!r} record: {line[:80]!r}")
        record = parse_record(line)
        if record.seq >= self._max_records:
            raise ProtocolError(f"the relay sent more than {self._max_records} records in one response")
        if record.seq != self._next_seq:
            raise ProtocolError(f"seq {record.seq} where {self._next_seq} was due (seq must rise by exactly 1 from 0)")
        self._next_seq += 1
        if self.start is None and not isinstance(record, StartRecord):
            raise ProtocolError(f"the first record is {record.type!r}, not 'start'")
        if isinstance(record, StartRecord):
            self._on_start(record)
        elif isinstance(record, (FieldRecord, ItemRecord, DeltaRecord)):
            self._check_pointer(record)
        if self._tap is not None:
            self._tap.on_event(record)
        if isinstance(record, (CompleteRecord, ErrorRecord)):
            self._terminal = record
            return None
        return record

    def _on_start(self, record: StartRecord) -> None:
        if self.start is not None:
            raise ProtocolError("a second 'start' record")
        self.start = record
        name = record.schema_name
        if self._schema_name is not None and name != self._schema_name:
            raise ProtocolError(f"the relay answered with schema {name!r}, not the {self._schema_name!r} asked for")
        schema = self._schema
        if schema is None:
            schema = SCHEMAS.get(name)
            if schema is None:
                raise ProtocolError(f"the relay names an unknown schema {name!r}")
        self._index = SchemaIndex(schema)

    def _check_pointer(self, record: FieldRecord | ItemRecord | DeltaRecord) -> None:
        assert self._index is not None
        pointer = record.pointer
        res = self._index.resolve(pointer)
        bad = ""
        if res.node is None or res.opaque:
            bad = "is not in the schema"
        elif isinstance(record, FieldRecord):
            if pointer == "" or res.is_item or res.in_element:
                bad = "is not a field (the root, or inside an array: those come as items)"
        elif isinstance(record, ItemRecord):
            if res.node.kind is not NodeKind.ARRAY or res.in_element or res.is_item:
                bad = "is not an array the schema has at the top of an item"
        else:
            if self._mode is not None and not _deltas_allowed(self._mode):
                bad = "got a delta in settled mode"
            elif not res.node.prose:
                bad = "is not a prose field (deltas are for prose fields only)"
        if bad:
            raise ProtocolError(f"{record.type} record for {pointer!r}: the pointer {bad}")
        if isinstance(record, FieldRecord):
            if pointer in self._fields or pointer in self._items:
                raise ProtocolError(f"field record for {pointer!r}: that value was already sent")
            self._fields.add(pointer)
        elif isinstance(record, ItemRecord):
            due = self._items.get(pointer, 0)
            if pointer in self._fields or record.index != due:
                raise ProtocolError(
                    f"item record for {pointer!r}: index {record.index} where {due} was due "
                    "(items come once each, in order)"
                    if pointer not in self._fields
                    else f"item record for {pointer!r}: the array was already sent whole"
                )
            self._items[pointer] = due + 1


def _deltas_allowed(mode: str) -> bool:
    try:
        return parse_mode(mode).spec.prose_as_deltas
    except ValueError:
        return False


# --- rebuilding the value -------------------------------------------------------------------------


class RecordAssembler:
    """Rebuild the extracted object from relay records (start / field / item / delta / complete).

    `value` is the object so far: every field at its pointer (objects made on the way), every
    item at its index in its array. `drafts` holds hybrid-mode prose text by pointer until the
    field settles (then the settled value replaces it). Raises ProtocolError for an item that
    skips an index or a value that lands on top of another.
    """

    def __init__(self) -> None:
        self.value: dict[str, Any] = {}
        self.drafts: dict[str, str] = {}

    def apply(self, record: Any) -> None:
        if isinstance(record, FieldRecord):
            parent, key = self._parent(record.pointer, create=True)
            if key in parent:
                raise ProtocolError(f"field {record.pointer!r} was set twice")
            parent[key] = record.value
            self.drafts.pop(record.pointer, None)
        elif isinstance(record, ItemRecord):
            parent, key = self._parent(record.pointer, create=True)
            array = parent.setdefault(key, [])
            if not isinstance(array, list):
                raise ProtocolError(f"item for {record.pointer!r}, which holds a non-array")
            if record.index != len(array):
                raise ProtocolError(f"item {record.index} of {record.pointer!r} where {len(array)} was due")
            array.append(record.value)
        elif isinstance(record, DeltaRecord):
            self.drafts[record.pointer] = self.drafts.get(record.pointer, "") + record.text

    def _parent(self, pointer: str, *, create: bool) -> tuple[dict[str, Any], str]:
        tokens = jp.parse_strict(pointer)
        if not tokens:
            raise ProtocolError(f"no place for pointer {pointer!r}")
        node: Any = self.value
        for token in tokens[:-1]:
            if isinstance(node, list):
                raise ProtocolError(f"pointer {pointer!r} goes into an array (items come whole)")
            node = node.setdefault(token, {})
        if not isinstance(node, dict):
            raise ProtocolError(f"pointer {pointer!r} goes into a non-object")
        return node, tokens[-1]


# --- IO ----------------------------------------------------------------------------------------------


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

    async def __anext__(self) -> Any:
        return await self._iter.__anext__()

    async def _records(self) -> AsyncIterator[Any]:
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
    idle_timeout: float | None = 60.0,
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
    `error` `timeout` record, so this is a backstop. The relay's keep-alives (spaces between
    records, written while its upstream writes a long value) count as records for at most
    `keepalive_span` seconds after the last record; bytes of a record trickled in never do.
    A non-200 answer raises its ProviderHTTPError (a wrong token: KeyRefused) with the relay's
    message and `.status`, its body read at most 64 KB; a relay that cannot be reached raises its
    CannotConnect ("nothing is listening at http://..."). Leaving the
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
        from urllib.parse import quote

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
        from livefill.extraction.schemas import resolve_schema

        source = resolve_schema(spec)
        return source.name, source.model
    return None, None


