"""API keys: where they come from, where they are kept, and how they stay out of every file.

    store = KeyStore()
    key = store.get("anthropic")                       # Key | None; key.secret only where the request is built
    store.set("openai-compatible", typed, base_url="http://127.0.0.1:8080/v1")   # KeptIn
    handler.addFilter(store.log_filter())              # every log line redacted

A key belongs to a *slot* (`key_slot`): Anthropic's API, OpenAI's API, or one other server by its
base URL; `KeyStore.get` looks in memory, the system keyring, then the environment. Masking and
redaction live in `livefill.wire.redaction`. The slots, the order and the fallbacks:
docs/notes/api-keys.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from livefill.errors import InputError, UsageError
from livefill.wire.providers.base_urls import DEFAULT_HOST
from livefill.wire.providers.spec import PROVIDER_SPECS
from livefill.wire.redaction import RedactingFilter, mask, redact

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "SERVICE",
    "Key",
    "KeySlot",
    "KeySource",
    "KeyStore",
    "KeptIn",
    "MissingKey",
    "base_url_example",
    "key_slot",
    "normalize_base_url",
    "server_env_var",
    "shown_url",
]

#: The keyring service name every livefill key is kept under.
SERVICE = "livefill"

#: family: (label, host, key variable, base-URL variable) of the vendors' own APIs (from PROVIDER_SPECS).
_OFFICIAL: dict[str, tuple[str, str, str, str]] = {
    s.name.split("-")[0]: (s.label.split()[0], urlsplit(s.base_url).hostname or "", s.key_variable, s.base_url_variable)
    for s in PROVIDER_SPECS.values()
    if s.key_variable and s.base_url and s.base_url_variable
}
_NO_KEY = ("ollama", "raw", "demo")
_SERVER_VAR_PREFIX = "LIVEFILL_API_KEY_"


class KeySource(StrEnum):
    """Where a key came from."""

    TYPED = "typed"  # typed into livefill while it runs (also kept in the keyring when it could be)
    KEYRING = "keyring"  # read from the system keyring
    ENV = "env"  # read from an environment variable


class KeptIn(StrEnum):
    """Where `KeyStore.set` kept a key."""

    KEYRING = "keyring"  # in the system keyring: it is there next launch
    SESSION = "this session only"  # in memory: gone when livefill exits


@dataclass(frozen=True)
class KeySlot:
    """Where one provider's key lives.

    `account` is the keyring user name ("anthropic", "openai", "server:<normalised base URL>");
    `label` names it for people ("Anthropic", "the server at http://127.0.0.1:8080/v1"); `host`
    is the host the key is sent to (for "check the API key: api.anthropic.com refused it"); `env_vars`
    are read in order; `required` is False for a server that may run without a key; `base_url`
    the normalised base URL of a server slot (None for the vendors' own APIs).
    """

    account: str
    label: str
    host: str
    env_vars: tuple[str, ...]
    required: bool
    base_url: str | None = None


@dataclass(frozen=True, repr=False)
class Key:
    """An API key and where it came from. Its repr and str show only the masked form."""

    secret: str
    source: KeySource
    slot: KeySlot
    env_var: str | None = None

    def masked(self) -> str:
        """The key as shown after entry: `mask(secret)`."""
        return mask(self.secret)

    @property
    def where(self) -> str:
        """Where the key came from, for people: "typed this session", "the system keyring",
        "the environment variable ANTHROPIC_API_KEY"."""
        if self.source is KeySource.TYPED:
            return "typed this session"
        if self.source is KeySource.KEYRING:
            return "the system keyring"
        return f"the environment variable {self.env_var}"

    def __repr__(self) -> str:
        return f"Key({self.slot.account!r}, {self.source.value}, {self.masked()!r})"

    def __str__(self) -> str:
        return self.masked()


class MissingKey(InputError):
    """A provider that needs a key has none in any source. `slot` says which key is missing."""

    def __init__(self, slot: KeySlot) -> None:
        super().__init__(
            f"No API key for {slot.label}: set {slot.env_vars[0]} or enter one in livefill's settings."
        )
        self.slot = slot


def normalize_base_url(base_url: str, *, example: str = "http://127.0.0.1:8080/v1") -> str:
    """A base URL as one spelling: scheme and host lower-cased, default port, user info, query
    and trailing slash dropped. `InputError` when it is not an http(s) URL with a host (its
    message suggests `example`)."""
    text = base_url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError:
        port, host, parts = None, None, None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host or any(c.isspace() for c in text):
        raise InputError(f"{shown_url(text)!r} is not a base URL; give one like {example}.")
    scheme = parts.scheme.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path.rstrip('/')}"


def shown_url(text: str) -> str:
    """A URL as it may be shown or logged: user info ("user:password@") dropped, 200 characters at most."""
    return re.sub(r"//[^/@]*@", "//", text)[:200]


def base_url_example(provider: str | None) -> str:
    """A base URL like the one `provider`'s server has, for a message that refuses one."""
    return DEFAULT_HOST if provider == "ollama" else "http://127.0.0.1:8080/v1"


def server_env_var(base_url: str) -> str:
    """The environment variable holding the key of the server at `base_url`:
    http://127.0.0.1:8080/v1 -> LIVEFILL_API_KEY_127_0_0_1_8080_V1."""
    rest = normalize_base_url(base_url).split("://", 1)[1]
    return _SERVER_VAR_PREFIX + re.sub(r"[^A-Z0-9]+", "_", rest.upper()).strip("_")


def key_slot(provider: str, base_url: str | None = None, *, environ: Mapping[str, str] | None = None) -> KeySlot | None:
    """The slot of `provider`'s key at `base_url`; None when the provider takes no key.

    Providers: "anthropic*" (Anthropic), "openai-compatible" / "compatible" (another server:
    `base_url` required, key optional), any other "openai*" (OpenAI), and "ollama", "raw",
    "demo" (no key). Anything else is a UsageError.
    """
    name = provider.lower()
    if name in _NO_KEY:
        return None
    if name.startswith("anthropic"):
        family = "anthropic"
    elif name in ("openai-compatible", "compatible"):
        family = "compatible"
    elif name.startswith("openai"):
        family = "openai"
    else:
        raise UsageError(f"no key slot for provider {provider!r}")
    environ = os.environ if environ is None else environ
    if family != "compatible":
        label, host, key_var, _ = _OFFICIAL[family]
        if base_url is None or _host_of(base_url) == host:
            return KeySlot(account=family, label=label, host=host, env_vars=(key_var,), required=True)
    elif base_url is None:
        raise UsageError("a compatible server's key is kept per server: give its base_url")
    url = normalize_base_url(base_url)
    env_vars = [server_env_var(url)]
    _, _, key_var, url_var = _OFFICIAL["anthropic" if family == "anthropic" else "openai"]
    paired = environ.get(url_var, "").strip()
    if paired and _same_url(paired, url):
        env_vars.append(key_var)
    return KeySlot(
        account=f"server:{url}",
        label=f"the server at {url}",
        host=_host_of(url),
        env_vars=tuple(env_vars),
        required=False,
        base_url=url,
    )


class KeyStore:
    """Where livefill's API keys come from and are kept (see the module comment for the order).

    `backend` is a keyring backend to use instead of keyring's own choice (read at each call,
    so `keyring.set_keyring` takes effect); `environ` a mapping to read instead of os.environ.
    """

    def __init__(self, *, backend: KeyringBackend | None = None, environ: Mapping[str, str] | None = None,
                 service: str = SERVICE) -> None:
        self._backend = backend
        self._environ = environ
        self._service = service
        self._typed: dict[str, str] = {}
        self._from_keyring: dict[str, str | None] = {}
        self._seen: set[str] = set()
        self._broken: str | None = None

    # --- the keyring ----------------------------------------------------------------------

    @property
    def keyring_available(self) -> bool:
        """Whether keys can be kept in (and read from) the system keyring."""
        return self.keyring_reason is None

    @property
    def keyring_reason(self) -> str | None:
        """Why the system keyring is not used, in one sentence; None when it is."""
        if self._broken is not None:
            return self._broken
        backend = self._keyring()
        if backend is None:
            return self._broken
        module = type(backend).__module__
        if module.endswith(".fail"):
            return "No system keyring was found (keyring has no usable backend here)."
        if module.endswith(".null"):
            return "The system keyring is turned off (keyring's null backend is configured)."
        if module.endswith(".chainer") and not getattr(backend, "backends", True):
            return "No system keyring was found (keyring has no usable backend here)."
        return None

    def _keyring(self) -> KeyringBackend | None:
        if self._backend is not None:
            return self._backend
        try:
            import keyring  # lazy: keyring loads its backends (220 ms), only once a key is looked up

            return keyring.get_keyring()
        except Exception as exc:
            self._fail("loading it", exc)
            return None

    def _fail(self, doing: str, exc: BaseException) -> None:
        detail = redact(str(exc).splitlines()[0] if str(exc) else "", self.known_secrets())[:200]
        what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        self._broken = f"The system keyring failed while {doing} ({what}), so it is not used."

    # --- keys -----------------------------------------------------------------------------

    def get(self, provider: str, base_url: str | None = None) -> Key | None:
        """The key for `provider` at `base_url`, from the first source that has one; None when
        none has (or the provider takes no key)."""
        slot = self._slot(provider, base_url)
        if slot is None:
            return None
        typed = self._typed.get(slot.account)
        if typed is not None:
            return Key(typed, KeySource.TYPED, slot)
        stored = self._read_keyring(slot)
        if stored:
            return Key(stored, KeySource.KEYRING, slot)
        environ = self._env()
        for var in slot.env_vars:
            value = environ.get(var, "").strip()
            if value:
                self._seen.add(value)
                return Key(value, KeySource.ENV, slot, env_var=var)
        return None

    def require(self, provider: str, base_url: str | None = None) -> Key | None:
        """`get`, but `MissingKey` when the slot needs a key (Anthropic's or OpenAI's own API)
        and no source has one. None for a provider without a key, or a server running without."""
        key = self.get(provider, base_url)
        slot = self._slot(provider, base_url)
        if key is None and slot is not None and slot.required:
            raise MissingKey(slot)
        return key

    def set(self, provider: str, secret: str, base_url: str | None = None) -> KeptIn:
        """Keep a key the person typed: in memory for this session, and in the system keyring
        when there is one. Returns where it was kept. `InputError` for an empty key or one with
        spaces, line breaks or non-ASCII characters (the message never quotes the key)."""
        slot = self._slot(provider, base_url)
        if slot is None:
            raise UsageError(f"{provider} takes no API key")
        secret = _checked(secret)
        self._seen.add(secret)
        self._typed[slot.account] = secret
        self._from_keyring.pop(slot.account, None)
        if not self.keyring_available:
            return KeptIn.SESSION
        try:
            self._keyring().set_password(self._service, slot.account, secret)
        except Exception as exc:
            self._fail("saving a key", exc)
            return KeptIn.SESSION
        return KeptIn.KEYRING

    def forget(self, provider: str, base_url: str | None = None) -> Key | None:
        """Drop the typed and the keyring key of this slot. Returns the key that still applies
        (one from the environment, which livefill cannot unset), or None."""
        slot = self._slot(provider, base_url)
        if slot is None:
            return None
        self._typed.pop(slot.account, None)
        self._from_keyring[slot.account] = None
        if self.keyring_available:
            try:
                self._keyring().delete_password(self._service, slot.account)
            except Exception as exc:
                if not _is_missing_entry(exc):
                    self._fail("deleting a key", exc)
        return self.get(provider, base_url)

    def slot(self, provider: str, base_url: str | None = None) -> KeySlot | None:
        """`key_slot(provider, base_url)` read against this store's environment."""
        return self._slot(provider, base_url)

    # --- redaction ------------------------------------------------------------------------

    def known_secrets(self) -> frozenset[str]:
        """Every key this store has handed out or been given (forgotten ones too), and every
        key variable set in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, LIVEFILL_API_KEY_*)."""
        environ = self._env()
        names = [var for var in environ if var.startswith(_SERVER_VAR_PREFIX)]
        names += [official[2] for official in _OFFICIAL.values()]
        env_values = {environ.get(var, "").strip() for var in names}
        return frozenset((self._seen | env_values) - {""})

    def redact(self, text: str) -> str:
        """`text` with every known secret replaced (run by every writer: history, settings,
        traces, the run log)."""
        return redact(text, self.known_secrets())

    def log_filter(self) -> RedactingFilter:
        """A logging filter redacting this store's known secrets, current at each record."""
        return RedactingFilter(self.known_secrets)

    # --- internals ------------------------------------------------------------------------

    def _env(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _slot(self, provider: str, base_url: str | None) -> KeySlot | None:
        return key_slot(provider, base_url, environ=self._env())

    def _read_keyring(self, slot: KeySlot) -> str | None:
        if slot.account in self._from_keyring:
            return self._from_keyring[slot.account]
        if not self.keyring_available:
            return None
        try:
            value = self._keyring().get_password(self._service, slot.account)
        except Exception as exc:
            self._fail("reading a key", exc)
            return None
        value = value.strip() if value else None
        if value:
            self._seen.add(value)
        self._from_keyring[slot.account] = value
        return value

    def __repr__(self) -> str:
        accounts = sorted(self._typed)
        return f"KeyStore(typed={accounts}, keyring={'available' if self._broken is None else 'unavailable'})"


def _checked(secret: str) -> str:
    secret = secret.strip()
    if not secret:
        raise InputError("The key is empty; paste the whole key.")
    for index, char in enumerate(secret):
        if char.isspace():
            raise InputError(f"The key has a space or line break at character {index + 1}; paste only the key.")
        if not (" " < char < "\x7f"):
            raise InputError(
                f"The key has a character that is not plain ASCII at character {index + 1}; paste only the key."
            )
    return secret


def _host_of(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def _same_url(a: str, b: str) -> bool:
    try:
        return normalize_base_url(a) == normalize_base_url(b)
    except InputError:
        return False


def _is_missing_entry(exc: BaseException) -> bool:
    try:
        from keyring.errors import PasswordDeleteError  # lazy: as keyring itself, above
    except Exception:
        return False
    return isinstance(exc, PasswordDeleteError)
