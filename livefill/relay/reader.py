"""Read a relay v1 response without IO: `RecordReader`, bytes in, checked records out.

It cuts lines with the strict `livefill.wire.ndjson.NDJSONFramer`, parses each into a record of
`livefill.relay.records` and enforces every client rule of docs/relay-v1.md (the list:
docs/notes/relay-client.md). `failure_from_record` is the RunFailure a terminal `error` stands for.
"""

from __future__ import annotations

from pydantic import BaseModel

from livefill.errors import ProtocolError, RunFailure, Truncated, UsageError, failure_for
from livefill.extraction.modes import parse_mode
from livefill.extraction.schema import NodeKind, SchemaIndex
from livefill.extraction.schemas import SCHEMAS
from livefill.relay.records import (
    KEEPALIVE,
    MAX_LINE_BYTES,
    CompleteRecord,
    DeltaRecord,
    ErrorRecord,
    FieldRecord,
    ItemRecord,
    RelayRecord,
    StartRecord,
    parse_record,
)
from livefill.wire.ndjson import NDJSONFramer
from livefill.wire.taps import WireTap, text_frame

__all__ = ["MAX_RECORDS", "RecordReader", "failure_from_record"]


def failure_from_record(record: ErrorRecord) -> RunFailure:
    """The RunFailure an `error` record stands for (`.code`, `.message`, `.pointer`, `.record`).

    An `upstream_error` keeps the record's message as it is: the relay wrote the upstream's one
    line ("check the API key: api.anthropic.com refused it (401 ...)"), and the client shows that line."""
    text = record.message
    if record.pointer and text.startswith(f"{record.pointer}: "):  # said once, by the failure's own "at /amount"
        text = text[len(record.pointer) + 2:]
    message = text if record.code == "upstream_error" else f"relay: {text}"
    failure = failure_for(record.code, message, record.pointer)
    failure.record = record  # type: ignore[attr-defined]
    return failure


MAX_RECORDS = 20_000  # records one relay response may carry (a form has far fewer values)


class RecordReader:
    """Bytes of a relay v1 response in, checked records out (docs/notes/relay-client.md).

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

    def feed(self, data: bytes) -> list[RelayRecord]:
        """Records completed by `data`, terminal held back; ProtocolError on any breach."""
        if self._closed:
            raise UsageError("RecordReader.feed() after close()")
        if not data:
            return []
        if self._terminal is not None:
            raise ProtocolError(f"data after the terminal {self._terminal.type!r} record")
        out: list[RelayRecord | None] = []
        for line in self._framer.feed(data):
            out.append(self._take(line))
        if self._terminal is not None and self._framer.dropped:
            raise ProtocolError(f"data after the terminal {self._terminal.type!r} record: a keep-alive")
        return [r for r in out if r is not None]

    def close(self) -> list[CompleteRecord | ErrorRecord]:
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

    def _take(self, line: str) -> RelayRecord | None:
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
