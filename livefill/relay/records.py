"""The records of the livefill relay protocol, v1 (docs/relay-v1.md).

Every record is one JSON object on one line, with `seq` (0, 1, 2 … with no gaps) and `type`:

    start     v: 1, run, schema, provider        first record, always
    field     pointer, value                     a value that is not an array element settled
    item      pointer (the array), index, value  one array element settled
    delta     pointer, text                      hybrid mode, prose fields: text appended
    complete  fields                             terminal: the whole object validated
    error     code, message, [pointer]           terminal: no result

The models are strict and forbid extra fields, so `parse_record` is also the check "this line is
one of the record types and nothing else". `encode_record` writes the exact wire form: compact
JSON, keys in the order above (`seq`, `type` first), `pointer` omitted from an `error` that has
none, and a trailing newline.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from livefill.errors import ProtocolError

__all__ = [
    "KEEPALIVE",
    "KEEPALIVE_EVERY",
    "RELAY_IDLE_GRACE",
    "ERROR_CODES",
    "EXTRACT_PATH",
    "RECORD_DOCUMENT_HEADER",
    "RECORD_HEADER",
    "UPSTREAM_KEY_HEADER",
    "MAX_LINE_BYTES",
    "PROTOCOL_VERSION",
    "CompleteRecord",
    "DeltaRecord",
    "ErrorCode",
    "ErrorRecord",
    "FieldRecord",
    "ItemRecord",
    "RelayRecord",
    "StartRecord",
    "TERMINAL_TYPES",
    "encode_record",
    "parse_record",
    "relay_backstop",
]

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 16384  # a line longer than this (not counting its "\n") is illegal
EXTRACT_PATH = "/relay/v1/extract"  # the one endpoint: POST a job, read NDJSON records
UPSTREAM_KEY_HEADER = "x-livefill-upstream-key"  # the app's key, for its embedded relay only (loopback)
RECORD_HEADER = "x-livefill-record"  # where the embedded relay writes a trace of its upstream (loopback)
RECORD_DOCUMENT_HEADER = "x-livefill-record-document"  # "0": the trace keeps only the document's hash
KEEPALIVE = b" "  # written before the next record while upstream writes a value not settled yet
KEEPALIVE_EVERY = 5.0  # at most one keep-alive this often (a quarter of a shorter idle limit)

RELAY_IDLE_GRACE = 3.0
"""Seconds (at most; 15 % of a shorter limit) the relay client waits beyond the idle limit, for
the relay's own verdict on its upstream, which says whether keep-alives or nothing came."""


def relay_backstop(idle: float) -> float:
    """How long the relay client waits for a byte when the run's idle limit is `idle`: the relay
    watches its upstream with the same limit (sent when shorter than its own) and says which
    silence it was, so its verdict must come first -- after the limit, counted from the silence,
    which may begin up to a keep-alive period after the relay's last keep-alive; and a grace."""
    return idle + min(RELAY_IDLE_GRACE, 0.15 * idle) + min(KEEPALIVE_EVERY, idle / 4)


ErrorCode = Literal[
    "upstream_error", "truncated", "validation_failed", "protocol_error", "cancelled", "timeout"
]
ERROR_CODES: tuple[str, ...] = ErrorCode.__args__  # type: ignore[attr-defined]

_Seq = Annotated[int, Field(ge=0)]
_Count = Annotated[int, Field(ge=0)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    seq: _Seq


class StartRecord(_Record):
    """First record of every response: protocol version, run id, schema name, provider."""

    type: Literal["start"] = "start"
    v: Literal[1] = 1
    run: str
    schema_name: str = Field(alias="schema")
    provider: str

    @field_validator("v", mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # JSON `true` is not the version number 1
            raise ValueError("v must be the integer 1")
        return value


class FieldRecord(_Record):
    """A value that is not an array element settled and passed its field's check."""

    type: Literal["field"] = "field"
    pointer: str
    value: Any


class ItemRecord(_Record):
    """One element of the array at `pointer` settled (at `index`) and passed its check."""

    type: Literal["item"] = "item"
    pointer: str
    index: _Count
    value: Any


class DeltaRecord(_Record):
    """Hybrid mode only: `text` was appended to the provisional prose value at `pointer`."""

    type: Literal["delta"] = "delta"
    pointer: str
    text: str


class CompleteRecord(_Record):
    """Terminal: the whole object validated; `fields` counts the field and item records sent."""

    type: Literal["complete"] = "complete"
    fields: _Count


class ErrorRecord(_Record):
    """Terminal: the run has no result. `pointer` names the failing value, when there is one."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: str
    pointer: str | None = None


RelayRecord = Annotated[
    StartRecord | FieldRecord | ItemRecord | DeltaRecord | CompleteRecord | ErrorRecord,
    Field(discriminator="type"),
]
"""Any relay v1 record, discriminated on `type`."""

TERMINAL_TYPES = frozenset({"complete", "error"})

_ADAPTER: TypeAdapter[Any] = TypeAdapter(RelayRecord)


def parse_record(line: str | bytes) -> RelayRecord:
    """Parse one line (without its newline) into a record; ProtocolError if it is not one."""
    try:
        return _ADAPTER.validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {}
        where = "/".join(str(part) for part in first.get("loc", ()))
        raise ProtocolError(
            f"not a relay v1 record ({first.get('msg', 'invalid')}{' at ' + where if where else ''}): "
            f"{_preview(line)}"
        ) from None


def encode_record(record: Any) -> bytes:
    """The record as one wire line: compact UTF-8 JSON and a trailing newline."""
    data = record.model_dump(by_alias=True)
    if isinstance(record, ErrorRecord) and data["pointer"] is None:
        del data["pointer"]
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (valid JSON escape) cannot be raw UTF-8
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        return text.encode("ascii") + b"\n"


def _preview(line: str | bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return repr(text if len(text) <= limit else text[:limit] + "…")
