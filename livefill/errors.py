"""livefill's error hierarchy, typed by whose fault an error is.

ProtocolError (the peer sent bad bytes), UsageError (the caller misused an API), InputError (a
person's input cannot be used) and RunFailure (a run ended without a result: the provider, the
connection, a timeout, Stop). Foreign exceptions become these at one boundary,
`livefill.wire.providers.transport.translate_errors`. The tree and what each means:
docs/notes/errors.md.
"""

from __future__ import annotations


def text_safe(text: str) -> str:
    """`text` with every lone surrogate (half a character, as in JSON's "\\ud800") written as its
    escape, so any encoder, terminal, file or wire takes it; other text is returned as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class LivefillError(Exception):
    """Base of every error livefill raises on purpose; its text is always encodable (`text_safe`)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(text_safe(arg) if isinstance(arg, str) else arg for arg in args))


class ProtocolError(LivefillError, ValueError):
    """A peer sent bytes that break a protocol."""


class UsageError(LivefillError, RuntimeError):
    """The caller misused an API (for example fed a parser after close())."""


class InputError(LivefillError, ValueError):
    """Something a person gave livefill (a document, a key) cannot be used; one line naming it."""


class TraceError(InputError):
    """A recorded trace (livefill/recording/trace.py) cannot be loaded or replayed: one line naming the file
    (`path`) and the line (`line`, 1-based; 0 when the file as a whole is at fault)."""

    def __init__(self, message: str, *, path: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


class RunFailure(LivefillError):
    """A run ended without a result. `code` is the relay v1 error code."""

    code = "protocol_error"
    # What the UI may show beside the message; set by the failures that know them (UpstreamError
    # and its HTTP-status subclasses, CannotConnect's host).
    host: str = ""
    status: int | None = None
    retry_after: float | None = None
    provider_message: str = ""

    def __init__(self, message: str, *, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message = text_safe(message)
        self.pointer = None if pointer is None else text_safe(pointer)


class UpstreamError(RunFailure):
    """The provider reported an error in the stream (or answered with an error status).

    `kind`: the provider's error type (`overloaded_error`, `server_error`, ...); `status`: the
    HTTP status when there was one; `host`: who said so (`api.anthropic.com`, `127.0.0.1:8080`);
    `provider_message`: the provider's own words, one line; `retry_after`: seconds to wait before
    trying again, when the provider said."""

    code = "upstream_error"

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        status: int | None = None,
        host: str = "",
        provider_message: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.host = host
        self.provider_message = provider_message
        self.retry_after = retry_after


class ProviderHTTPError(UpstreamError):
    """The provider answered the request with an HTTP error status (`status` is always set)."""


class KeyRefused(ProviderHTTPError):
    """401 / 403: the API key was refused (missing, wrong, revoked, or not allowed this)."""


class ModelNotFound(ProviderHTTPError):
    """404 for the model: `model` is the name that was asked for."""

    def __init__(self, message: str, *, model: str = "", **fields: object) -> None:
        super().__init__(message, **fields)  # type: ignore[arg-type]
        self.model = model


class RateLimited(ProviderHTTPError):
    """429: too many requests; `retry_after` holds the seconds the provider asked for (or None)."""


class ProviderUnavailable(ProviderHTTPError):
    """5xx, or Anthropic's 529 overloaded_error: the provider's trouble; trying again may work."""


class RequestRejected(ProviderHTTPError):
    """400 and the other 4xx: the provider refused the request body; its message says why."""


class Truncated(RunFailure):
    """The stream ended before its terminal: max_tokens / length, or EOF."""

    code = "truncated"


class ValidationFailed(RunFailure):
    """A settled value (at `pointer`) or the whole object failed its schema."""

    code = "validation_failed"


class ConnectionLost(RunFailure):
    """The transport broke: connection refused, reset, or a read error."""

    code = "protocol_error"


class CannotConnect(ConnectionLost):
    """No connection was made: `host` (name[:port]) and `url` (scheme://host[:port]) say where."""

    code = "upstream_error"

    def __init__(self, message: str, *, host: str = "", url: str = "") -> None:
        super().__init__(message)
        self.host = host
        self.url = url


class NothingListening(CannotConnect):
    """The connection was refused: no server is listening at `url`."""


class HostNotFound(CannotConnect):
    """The host name does not resolve (DNS)."""


class TLSFailed(CannotConnect):
    """The TLS handshake with `host` failed (a plain-HTTP server, a bad certificate, ...)."""


class StreamTimeout(RunFailure):
    """No content arrived (only keep-alives, or nothing) for longer than the idle limit."""

    code = "timeout"


class Cancelled(RunFailure):
    """The user stopped the run; the request was closed."""

    code = "cancelled"


# The relay v1 error codes and the exceptions they stand for: the one map, both ways. An `error`
# record with `protocol_error` is a well-formed terminal (the relay met bytes upstream that broke
# a protocol), not a breach by the relay itself, so it is a plain RunFailure carrying that code;
# `ProtocolError` is kept for bytes *this* side cannot read. The typed subclasses (KeyRefused,
# NothingListening, ...) travel as their parent's code (`upstream_error`) with their one line as
# the record's message; the client shows that line as it is.
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
