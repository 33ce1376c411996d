"""livefill's error hierarchy, typed by whose fault an error is.

    LivefillError
    ├── ProtocolError (ValueError)   the peer sent bytes that break a protocol (SSE, NDJSON, JSON,
    │   │                            a provider's vocabulary, the relay's records)
    │   └── (core.prefix.JSONPrefixError, IncompleteJSON live beside their parser)
    ├── UsageError (RuntimeError)    the caller misused an API (feed after close, bad argument)
    ├── InputError (ValueError)      a person's input cannot be used (a document, a key); the
    │                                message is one line naming it (core.documents' errors subclass it)
    └── RunFailure                   a run ended without a result, for a reason a person can read;
        ├── UpstreamError            the provider said so mid-stream (error event / error line)
        ├── Truncated                the stream ended before its terminal (max_tokens, length, EOF)
        ├── ValidationFailed         a settled value, or the whole object, failed its schema
        ├── ConnectionLost           the transport broke (reset, refused, read error)
        ├── StreamTimeout            nothing but keep-alives for longer than the idle limit
        └── Cancelled                the user pressed Stop (the request was closed)

Foreign exceptions (httpx, anthropic, pydantic) are translated into these at one boundary,
`core.providers.transport.translate_errors`; nothing above it catches a foreign exception.
Every RunFailure carries `code`, the relay protocol's error code for it.
"""

from __future__ import annotations


class LivefillError(Exception):
    """Base of every error livefill raises on purpose."""


class ProtocolError(LivefillError, ValueError):
    """A peer sent bytes that break a protocol."""


class UsageError(LivefillError, RuntimeError):
    """The caller misused an API (for example fed a parser after close())."""


class InputError(LivefillError, ValueError):
    """Something a person gave livefill (a document, a key) cannot be used; one line naming it."""


class RunFailure(LivefillError):
    """A run ended without a result. `code` is the relay v1 error code."""

    code = "protocol_error"

    def __init__(self, message: str, *, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer


class UpstreamError(RunFailure):
    """The provider reported an error in the stream (or answered with an error status)."""

    code = "upstream_error"

    def __init__(self, message: str, *, kind: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class Truncated(RunFailure):
    """The stream ended before its terminal: max_tokens / length, or EOF."""

    code = "truncated"


class ValidationFailed(RunFailure):
    """A settled value (at `pointer`) or the whole object failed its schema."""

    code = "validation_failed"


class ConnectionLost(RunFailure):
    """The transport broke: connection refused, reset, or a read error."""

    code = "protocol_error"


class StreamTimeout(RunFailure):
    """No content arrived (only keep-alives, or nothing) for longer than the idle limit."""

    code = "timeout"


class Cancelled(RunFailure):
    """The user stopped the run; the request was closed."""

    code = "cancelled"


# The relay v1 error codes and the exceptions they stand for: the one map, both ways. An `error`
# record with `protocol_error` is a well-formed terminal (the relay met bytes upstream that broke
# a protocol), not a breach by the relay itself, so it is a plain RunFailure carrying that code;
# `ProtocolError` is kept for bytes *this* side cannot read.
FAILURES: dict[str, type[RunFailure]] = {
    "upstream_error": UpstreamError,
    "truncated": Truncated,
    "validation_failed": ValidationFailed,
    "protocol_error": RunFailure,
    "cancelled": Cancelled,
    "timeout": StreamTimeout,
}


def failure_for(code: str, message: str, pointer: str | None = None) -> RunFailure:
    """The RunFailure a relay error code stands for (KeyError for a code relay v1 does not have)."""
    cls = FAILURES[code]
    if cls is UpstreamError:
        failure: RunFailure = UpstreamError(message, kind="relay")
        failure.pointer = pointer
        return failure
    return cls(message, pointer=pointer)


def code_of(exc: BaseException) -> str:
    """The relay error code for an exception: a RunFailure's own, protocol_error for a
    ProtocolError, upstream_error for anything else."""
    if isinstance(exc, RunFailure):
        return exc.code
    if isinstance(exc, ProtocolError):
        return "protocol_error"
    return "upstream_error"
