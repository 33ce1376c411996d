"""Recorded traces: one run's response, byte for byte with its timing, as a JSON Lines file.

    trace = load_trace(path)        # Trace: header, reads, trailer, truncated

How this works
--------------
The format is docs/trace-format.md: line 1 is the header (format name and version, provider,
wire, base URL, model, the full JSON Schema, the document or its SHA-256, the request body, the
start time, the response status and the headers that matter), then one `{"t_ms", "b64"}` line per
network read (milliseconds since the request was sent, and the read's bytes), then a trailer
`{"end": ..., "reason": ...}` saying how the run ended. livefill.recording.trace_writer writes
it; livefill.recording.recordings lists the folder of them.

`load_trace` reads a file without a trailer, or whose last line was cut in the middle (no newline
at its end), as `truncated=True`: everything before the cut replays. Anything else that is wrong
(no header, an unknown version, bad JSON or bad base64 in the middle, a read before the header,
time going backwards, a wire the demo provider cannot replay) is a `TraceError` whose one-line
message names the file and the line.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livefill.errors import TraceError
from livefill.extraction.schemas import SchemaSource, resolve_schema
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = [
    "ENDINGS",
    "FORMAT",
    "REPLAY_WIRES",
    "VERSION",
    "Trace",
    "TraceRead",
    "load_trace",
    "parse_trace",
    "replay_ending",
]

FORMAT = "livefill"
VERSION = 1

#: The wires the demo provider can replay a trace on (every provider's wire, once).
REPLAY_WIRES: tuple[str, ...] = tuple(dict.fromkeys(spec.wire for spec in PROVIDER_SPECS.values()))

#: How a run ended, as the trailer's `end` says it.
ENDINGS: tuple[str, ...] = ("complete", "stopped", "failed", "cancelled")


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TraceRead:
    """One network read: when (milliseconds since the request was sent) and its bytes."""

    t_ms: float
    data: bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Trace:
    """A loaded trace: its header, its reads in order, its trailer (None when `truncated`)."""

    header: Mapping[str, Any]
    reads: tuple[TraceRead, ...]
    trailer: Mapping[str, Any] | None
    truncated: bool
    path: str = ""
    name: str = field(default="")

    @property
    def provider(self) -> str:
        return str(self.header["provider"])

    @property
    def wire(self) -> str:
        return str(self.header["wire"])

    @property
    def model(self) -> str:
        return str(self.header.get("model") or "")

    @property
    def status(self) -> int:
        status = self.header.get("status")
        return int(status) if isinstance(status, int) else 200

    @property
    def headers(self) -> dict[str, str]:
        return dict(self.header.get("headers") or {})

    @property
    def schema(self) -> dict[str, Any]:
        return dict(self.header["schema"])

    @property
    def document(self) -> str | None:
        """The document's text, or None when the trace keeps only its SHA-256."""
        doc = self.header.get("document")
        return doc if isinstance(doc, str) else None

    @property
    def response_ms(self) -> float:
        value = self.header.get("response_ms")
        return float(value) if isinstance(value, (int, float)) else 0.0

    @property
    def end(self) -> str:
        """How the recorded run ended: the trailer's `end`, or "truncated"."""
        return "truncated" if self.trailer is None else str(self.trailer.get("end"))

    @property
    def duration_ms(self) -> float:
        return self.reads[-1].t_ms if self.reads else 0.0

    def body(self) -> bytes:
        """Every read's bytes, concatenated: the response body as received."""
        return b"".join(r.data for r in self.reads)

    def schema_source(self) -> SchemaSource:
        """The trace's schema as livefill.extraction.schemas resolves it (the bundled one when the trace
        names a bundled schema with the same JSON Schema; the trace's own JSON Schema otherwise)."""
        name = self.header.get("schema_name")
        if isinstance(name, str) and name:
            try:
                bundled = resolve_schema(name)
            except Exception:  # noqa: BLE001 - not bundled here: the trace's own schema decides
                bundled = None
            if bundled is not None and bundled.bundled and dict(bundled.json_schema) == self.schema:
                return bundled
        return resolve_schema(self.schema)


_REQUIRED = ("provider", "wire", "schema", "request", "started_at", "status", "headers")


def load_trace(path: str | os.PathLike[str], *, replayable: bool = True) -> Trace:
    """Load the trace at `path` (TraceError naming the file and line when it cannot be used;
    `replayable`: also refuse a wire the demo provider cannot replay)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise TraceError(f"{p}: cannot read the trace: {exc.strerror or exc}", path=str(p)) from None
    return parse_trace(raw, name=str(p), replayable=replayable)


def parse_trace(data: bytes | str, *, name: str = "<trace>", replayable: bool = True) -> Trace:
    """A trace from its file's contents (see `load_trace`)."""
    text = data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else data

    def fail(line: int, what: str) -> TraceError:
        return TraceError(f"{name}: line {line}: {what}", path=name, line=line)

    if not text.strip():
        raise fail(1, "the trace is empty: its header line is missing")
    lines = text.split("\n")
    ends_cleanly = text.endswith("\n")
    if ends_cleanly:
        lines.pop()
    last = len(lines)
    header: dict[str, Any] | None = None
    reads: list[TraceRead] = []
    trailer: dict[str, Any] | None = None
    truncated = False
    previous = -math.inf
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if trailer is not None:
            raise fail(number, "a line after the trailer (the trailer must be the last line)")
        try:
            obj = json.loads(line)
        except ValueError as exc:
            if number == last and not ends_cleanly:
                truncated = True  # the writer was stopped in the middle of this line
                break
            raise fail(number, f"not a JSON line ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise fail(number, "nested deeper than a JSON line can be read") from None
        if not isinstance(obj, dict):
            raise fail(number, f"expected a JSON object, got {type(obj).__name__}")
        if header is None:
            if "t_ms" in obj or "b64" in obj:
                raise fail(number, "a network read before the header (the header line is missing)")
            if obj.get("trace") != FORMAT:
                raise fail(number, 'the header line is missing (expected {"trace": "livefill", ...})')
            version = obj.get("version")
            if version != VERSION:
                raise fail(number, f"unknown trace version {version!r} (this livefill reads version {VERSION})")
            missing = [k for k in _REQUIRED if k not in obj]
            if missing:
                raise fail(number, f"the header lacks {', '.join(missing)}")
            if "document" not in obj and "document_sha256" not in obj:
                raise fail(number, "the header has neither document nor document_sha256")
            if not isinstance(obj["schema"], dict):
                raise fail(number, "the header's schema is not a JSON Schema object")
            if not isinstance(obj["headers"], dict):
                raise fail(number, "the header's headers are not an object")
            if obj["status"] is not None and not (isinstance(obj["status"], int) and 100 <= obj["status"] <= 599):
                raise fail(number, f"the header's status {obj['status']!r} is not an HTTP status")
            if replayable and obj["wire"] not in REPLAY_WIRES:
                raise fail(
                    number,
                    f"the trace was recorded on the {obj['wire']!r} wire, which the demo provider cannot "
                    f"replay (it replays {', '.join(REPLAY_WIRES)})",
                )
            header = obj
            continue
        if "end" in obj:
            trailer = obj
            continue
        if "t_ms" not in obj or "b64" not in obj:
            raise fail(number, 'expected a read {"t_ms": ..., "b64": ...} or the trailer {"end": ...}')
        t_ms, b64 = obj["t_ms"], obj["b64"]
        if isinstance(t_ms, bool) or not isinstance(t_ms, (int, float)) or not math.isfinite(t_ms) or t_ms < 0:
            raise fail(number, f"t_ms {t_ms!r} is not a time in milliseconds >= 0")
        if t_ms < previous:
            raise fail(number, f"t_ms goes backwards ({t_ms:g} after {previous:g})")
        if not isinstance(b64, str):
            raise fail(number, "b64 is not a string")
        try:
            chunk = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise fail(number, "b64 is not valid base64") from None
        previous = float(t_ms)
        reads.append(TraceRead(float(t_ms), chunk))
    if header is None:
        raise fail(1, "the header line is missing")
    if trailer is None:
        truncated = True
    return Trace(
        header=header, reads=tuple(reads), trailer=trailer, truncated=truncated, path=name,
        name=Path(name).name if name and not name.startswith("<") else name,
    )


def replay_ending(trace: Trace) -> str:
    """Why a replay of `trace` ends before its stream does, when the recording alone explains it:
    its run was stopped, or the file was cut off. "" otherwise (a recorded failure -- a refusal,
    a broken connection, a failed check -- replays as that same failure and says so itself)."""
    end = trace.end
    if end in ("stopped", "cancelled"):
        return "the recording ends here: its run was stopped"
    if end == "truncated":
        return "the recording ends here: it was cut off"
    return ""
