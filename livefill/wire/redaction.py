"""Secrets kept out of text: `mask` (what a key shows), `redact` and the logging filter that
replaces every known secret (also URL- and JSON-escaped) with REDACTED."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from urllib.parse import quote

__all__ = ["REDACTED", "RedactingFilter", "install_log_redaction", "mask", "redact"]

#: What a secret is replaced with in redacted text.
REDACTED = "[key redacted]"

_PUBLIC_PREFIXES = ("sk-ant-", "sk-proj-", "sk-")  # the same for every key of a vendor
_MASK_HIDDEN = "••••••••"


def mask(secret: str) -> str:
    """A key with all but a little hidden: "sk-ant-…a1b2".

    A key of 8 characters or fewer shows none ("••••••••"); a longer one shows its last
    `min(4, len // 4)` characters, and a vendor's public prefix (`sk-ant-`, `sk-proj-`, `sk-`)
    when the key is at least 20 characters long.
    """
    if len(secret) <= 8:
        return _MASK_HIDDEN
    tail = secret[-min(4, len(secret) // 4):]
    prefix = ""
    if len(secret) >= 20:
        prefix = next((p for p in _PUBLIC_PREFIXES if secret.startswith(p)), "")
    return f"{prefix}…{tail}"


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret in `secrets` (and its URL- and JSON-escaped forms) replaced by
    REDACTED. Longer secrets first, so a key inside another is not half-replaced."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret or not secret.strip():
            continue
        forms.add(secret)
        forms.add(quote(secret, safe=""))
        forms.add(json.dumps(secret)[1:-1])
    for form in sorted(forms, key=len, reverse=True):
        if form in text:
            text = text.replace(form, REDACTED)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that redacts known secrets from a record's message, exception text and
    stack text (formatting the message once, so args holding a key are covered too).

    `secrets` is an iterable of secrets or a callable returning one (asked on every record, so
    keys typed later are covered): `RedactingFilter(store.known_secrets)`. Add it to every
    handler (`install_log_redaction`): a filter on a logger does not see its children's records.
    """

    def __init__(self, secrets: Callable[[], Iterable[str]] | Iterable[str]) -> None:
        super().__init__()
        self._secrets = secrets if callable(secrets) else (lambda fixed=tuple(secrets): fixed)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = tuple(self._secrets())
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: redact the raw parts instead
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message, secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return True


def install_log_redaction(
    secrets: Callable[[], Iterable[str]] | Iterable[str], logger: logging.Logger | None = None
) -> RedactingFilter:
    """Add one RedactingFilter to every handler of `logger` (the root logger by default) and to
    the logger itself; returns it, for handlers added later (`handler.addFilter(...)`)."""
    target = logging.getLogger() if logger is None else logger
    redacting = RedactingFilter(secrets)
    target.addFilter(redacting)
    for handler in target.handlers:
        handler.addFilter(redacting)
    return redacting
