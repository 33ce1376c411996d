"""Why a run ended without a result, said as one line a person reads (and the relay code for it).

The run's status, the run log, the window's status bar and `livefill extract` all say a failure
with `describe_failure`. A request the provider refused is said by its own message, composed in
one place (livefill.wire.providers.http_failures): what to do first, then the host, never the
app's own embedded server ("check the API key: api.anthropic.com refused it (401 ...)").
"""

from __future__ import annotations

from livefill.errors import (
    Cancelled,
    CannotConnect,
    ConnectionLost,
    InputError,
    ProtocolError,
    ProviderHTTPError,
    RunFailure,
    StreamTimeout,
    Truncated,
    UpstreamError,
    ValidationFailed,
)

__all__ = ["describe_failure"]


def describe_failure(exc: BaseException) -> tuple[str, str | None]:
    """A person's sentence for why a run ended without a result, and the relay code for it.

    One line, never a traceback. A request the provider refused (ProviderHTTPError) or that
    reached no one (CannotConnect) is said by its own message, which leads with what to do
    ("check the API key: api.anthropic.com refused it (401 ...)"); so is the `upstream_error`
    record of a relay, which carries that same line."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    message = " ".join(str(message).split())
    if isinstance(exc, (ProviderHTTPError, CannotConnect)):
        return message, code
    if isinstance(exc, UpstreamError) and getattr(exc, "record", None) is not None:
        return message, code
    if isinstance(exc, Cancelled):
        return "stopped by the user", "cancelled"
    if isinstance(exc, ValidationFailed):
        where = f" at {exc.pointer}" if exc.pointer else ""
        return f"validation failed{where}: {message}", code
    if isinstance(exc, Truncated):
        return f"truncated: {message}", code
    if isinstance(exc, UpstreamError):
        return f"provider error: {message}", code
    if isinstance(exc, StreamTimeout):
        return f"idle timeout: {message}", code
    if isinstance(exc, ConnectionLost):
        return f"connection lost: {message}", code
    if isinstance(exc, ProtocolError):
        return f"protocol error: {message}", "protocol_error"
    if isinstance(exc, InputError):
        return str(exc), None
    if isinstance(exc, RunFailure) and code == "protocol_error":  # a relay's: said as ours is
        return f"protocol error: {message}", code
    if isinstance(exc, RunFailure):
        return message, code
    return " ".join(f"internal error: {type(exc).__name__}: {exc}".split()), None
