"""livefill/wire/keys.py: key sources in order, keyring fallbacks with a reason, masking, and no secret in
any repr, str, exception message or log line."""

from __future__ import annotations

import io
import logging
import traceback

import keyring
import keyring.backends.fail
import keyring.backends.null
import pytest
from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.errors import KeyringLocked, PasswordDeleteError, PasswordSetError

from livefill.errors import InputError, UsageError
from livefill.wire.keys import (
    SERVICE,
    Key,
    KeySource,
    KeyStore,
    KeptIn,
    MissingKey,
    key_slot,
    normalize_base_url,
    server_env_var,
)
from livefill.wire.redaction import REDACTED, RedactingFilter, install_log_redaction, mask, redact

# Unique, so a hit anywhere is this test's key and nothing else.
SECRET = "sk-ant-api03-TESTONLY-6b1f0c9e2d7a4f18b3e5c0a9d8f7e6b5-a1b2"
OTHER = "sk-proj-TESTONLY-0f9e8d7c6b5a49382716-z9y8"
ENV_KEY = "sk-TESTONLY-env-5c4b3a29187f6e5d-q7w8"


class _TestBackend(KeyringBackend):
    @properties.classproperty
    def priority(cls):  # never chosen by keyring on its own: only through set_keyring
        raise RuntimeError("test backend")


class MemoryKeyring(_TestBackend):
    """A keyring that keeps passwords in a dict."""

    def __init__(self):
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}
        self.calls: list[str] = []

    def get_password(self, service, username):
        self.calls.append("get")
        return self.data.get((service, username))

    def set_password(self, service, username, password):
        self.calls.append("set")
        self.data[(service, username)] = password

    def delete_password(self, service, username):
        self.calls.append("delete")
        if (service, username) not in self.data:
            raise PasswordDeleteError("no such password")
        del self.data[(service, username)]


class LockedKeyring(_TestBackend):
    """A keyring whose every call fails, quoting what it was given (as a careless backend might)."""

    def get_password(self, service, username):
        raise KeyringLocked(f"collection is locked ({service}/{username})")

    def set_password(self, service, username, password):
        raise PasswordSetError(f"could not store {password} for {username}")

    def delete_password(self, service, username):
        raise KeyringLocked("collection is locked")


@pytest.fixture
def use_keyring():
    """keyring.set_keyring(backend) for one test, the previous backend restored after."""
    import keyring.core

    previous = keyring.core._keyring_backend

    def install(backend):
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.core._keyring_backend = previous


@pytest.fixture
def env(monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


# --- slots ------------------------------------------------------------------------------------


def test_official_slots(env):
    anthropic = key_slot("anthropic")
    assert (anthropic.account, anthropic.host, anthropic.env_vars, anthropic.required) == (
        "anthropic", "api.anthropic.com", ("ANTHROPIC_API_KEY",), True)
    assert key_slot("anthropic", "https://api.anthropic.com") == anthropic
    for provider in ("openai-chat", "openai-responses"):
        slot = key_slot(provider, "https://api.openai.com/v1")
        assert (slot.account, slot.env_vars, slot.label) == ("openai", ("OPENAI_API_KEY",), "OpenAI")


def test_providers_without_keys_and_unknown_ones():
    assert key_slot("ollama", "http://127.0.0.1:11434") is None
    assert key_slot("raw") is None
    with pytest.raises(UsageError):
        key_slot("gemini")
    with pytest.raises(UsageError):
        key_slot("openai-compatible")  # a compatible server needs its base URL


def test_another_server_gets_its_own_slot(env):
    slot = key_slot("openai-compatible", "HTTP://LocalHost:8080/v1/")
    assert slot.account == "server:http://localhost:8080/v1"
    assert slot.env_vars == ("LIVEFILL_API_KEY_LOCALHOST_8080_V1",)
    assert slot.required is False and slot.host == "localhost" and slot.label == "the server at http://localhost:8080/v1"


def test_a_vendor_key_never_goes_to_another_host_unless_paired(env):
    slot = key_slot("openai-chat", "http://127.0.0.1:8080/v1")
    assert slot.account.startswith("server:") and "OPENAI_API_KEY" not in slot.env_vars
    assert "ANTHROPIC_API_KEY" not in key_slot("anthropic", "http://127.0.0.1:9000").env_vars
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/")
    assert key_slot("openai-chat", "http://127.0.0.1:8080/v1").env_vars[-1] == "OPENAI_API_KEY"
    assert key_slot("openai-compatible", "http://127.0.0.1:8080/v1").env_vars[-1] == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" not in key_slot("openai-chat", "http://127.0.0.1:8081/v1").env_vars


@pytest.mark.parametrize(("url", "normal"), [
    ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
    ("https://Example.COM:443/", "https://example.com"),
    ("http://host:80/api", "http://host/api"),
    ("http://user:pw@host:9/x?y=1", "http://host:9/x"),
    ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
])
def test_normalize_base_url(url, normal):
    assert normalize_base_url(url) == normal


@pytest.mark.parametrize("url", ["localhost:8080", "ftp://host", "http://", "http://host:99999", "", "http://not a url", "http://host/v1 x"])
def test_a_bad_base_url_is_an_input_error(url):
    with pytest.raises(InputError) as info:
        normalize_base_url(url)
    assert "not a base URL" in str(info.value)


def test_a_bad_base_url_message_drops_user_info():
    with pytest.raises(InputError) as info:
        normalize_base_url(f"ftp://me:{SECRET}@host")
    assert SECRET not in str(info.value)


def test_server_env_var():
    assert server_env_var("http://127.0.0.1:8080/v1") == "LIVEFILL_API_KEY_127_0_0_1_8080_V1"
    assert server_env_var("https://gw.example.com/openai/") == "LIVEFILL_API_KEY_GW_EXAMPLE_COM_OPENAI"


# --- sources and their order ------------------------------------------------------------------


def test_priority_typed_then_keyring_then_env(env, use_keyring):
    backend = use_keyring(MemoryKeyring())
    env.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    store = KeyStore()
    key = store.get("anthropic")
    assert (key.secret, key.source, key.env_var) == (ENV_KEY, KeySource.ENV, "ANTHROPIC_API_KEY")
    assert key.where == "the environment variable ANTHROPIC_API_KEY"

    backend.data[(SERVICE, "anthropic")] = OTHER
    fresh = KeyStore()
    assert (fresh.get("anthropic").secret, fresh.get("anthropic").source) == (OTHER, KeySource.KEYRING)
    assert fresh.get("anthropic").where == "the system keyring"

    assert fresh.set("anthropic", SECRET) is KeptIn.KEYRING
    assert backend.data[(SERVICE, "anthropic")] == SECRET
    assert (fresh.get("anthropic").secret, fresh.get("anthropic").source) == (SECRET, KeySource.TYPED)
    assert fresh.get("anthropic").where == "typed this session"
    next_launch = KeyStore()
    assert (next_launch.get("anthropic").secret, next_launch.get("anthropic").source) == (SECRET, KeySource.KEYRING)


def test_keyring_is_read_once_per_slot(env, use_keyring):
    backend = use_keyring(MemoryKeyring())
    store = KeyStore()
    assert store.get("openai-chat") is None and store.get("openai-responses") is None
    assert backend.calls == ["get"]


def test_no_key_anywhere(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    assert store.get("anthropic") is None
    assert store.get("ollama") is None
    with pytest.raises(UsageError):
        store.set("ollama", SECRET)


def test_require_names_the_missing_key_and_where_to_put_it(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    with pytest.raises(MissingKey) as info:
        store.require("anthropic")
    assert str(info.value) == "No API key for Anthropic: set ANTHROPIC_API_KEY or enter one in livefill's settings."
    assert isinstance(info.value, InputError) and info.value.slot.account == "anthropic"
    assert store.require("openai-compatible", "http://127.0.0.1:8080/v1") is None  # a server may need none
    assert store.require("ollama") is None
    env.setenv("OPENAI_API_KEY", ENV_KEY)
    assert store.require("openai-responses").secret == ENV_KEY


def test_per_server_keys_are_kept_apart(env, use_keyring):
    backend = use_keyring(MemoryKeyring())
    store = KeyStore()
    a, b = "http://127.0.0.1:8080/v1", "http://127.0.0.1:9090/v1"
    store.set("openai-compatible", SECRET, base_url=a + "/")
    assert store.get("openai-compatible", a).secret == SECRET
    assert store.get("openai-chat", a).secret == SECRET  # the same server, whatever the wire
    assert store.get("openai-compatible", b) is None
    assert store.get("openai-chat") is None  # never OpenAI's own slot
    assert backend.data == {(SERVICE, "server:http://127.0.0.1:8080/v1"): SECRET}
    env.setenv("LIVEFILL_API_KEY_127_0_0_1_9090_V1", f"  {OTHER}\n")
    key = store.get("openai-compatible", b)
    assert (key.secret, key.env_var) == (OTHER, "LIVEFILL_API_KEY_127_0_0_1_9090_V1")


def test_explicit_backend_and_environ():
    backend = MemoryKeyring()
    store = KeyStore(backend=backend, environ={"OPENAI_API_KEY": ENV_KEY})
    assert store.get("openai-chat").secret == ENV_KEY
    assert store.set("openai-chat", SECRET) is KeptIn.KEYRING
    assert backend.data[(SERVICE, "openai")] == SECRET


def test_forget_drops_typed_and_keyring_and_says_what_still_applies(env, use_keyring):
    backend = use_keyring(MemoryKeyring())
    env.setenv("OPENAI_API_KEY", ENV_KEY)
    store = KeyStore()
    store.set("openai-chat", SECRET)
    remaining = store.forget("openai-chat")
    assert (remaining.secret, remaining.source) == (ENV_KEY, KeySource.ENV)
    assert backend.data == {} and store.get("openai-chat").source is KeySource.ENV
    env.delenv("OPENAI_API_KEY")
    assert store.forget("openai-chat") is None  # nothing in the keyring: not an error
    assert store.keyring_available


# --- the keyring missing or failing -----------------------------------------------------------


@pytest.mark.parametrize(("backend", "words"), [
    (keyring.backends.fail.Keyring(), "No system keyring was found"),
    (keyring.backends.null.Keyring(), "turned off"),
])
def test_no_keyring_keeps_keys_for_this_session_only(env, use_keyring, backend, words):
    use_keyring(backend)
    store = KeyStore()
    assert not store.keyring_available and words in store.keyring_reason
    assert store.set("anthropic", SECRET) is KeptIn.SESSION
    assert KeptIn.SESSION.value == "this session only"
    assert store.get("anthropic").source is KeySource.TYPED
    assert KeyStore().get("anthropic") is None  # gone with the session


def test_a_failing_keyring_falls_back_to_env_with_a_reason(env, use_keyring):
    use_keyring(LockedKeyring())
    env.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    store = KeyStore()
    assert store.keyring_available  # not known to fail until used
    key = store.get("anthropic")
    assert (key.secret, key.source) == (ENV_KEY, KeySource.ENV)
    assert not store.keyring_available
    assert store.keyring_reason == (
        "The system keyring failed while reading a key (KeyringLocked: collection is locked"
        " (livefill/anthropic)), so it is not used.")


def test_a_keyring_that_fails_to_save_keeps_the_key_for_the_session(env, use_keyring):
    use_keyring(LockedKeyring())
    store = KeyStore()
    assert store.set("anthropic", SECRET) is KeptIn.SESSION
    assert store.get("anthropic").secret == SECRET
    assert "failed while saving a key (PasswordSetError" in store.keyring_reason
    assert SECRET not in store.keyring_reason  # the backend quoted it; the reason does not
    assert REDACTED in store.keyring_reason
    assert store.forget("anthropic") is None


def test_the_default_keyring_on_this_machine_is_handled(env):
    store = KeyStore()
    assert store.keyring_available in (True, False)
    assert (store.keyring_reason is None) == store.keyring_available


# --- typed keys are checked without being quoted ----------------------------------------------


@pytest.mark.parametrize(("typed", "words"), [
    ("", "The key is empty"),
    ("   \n", "The key is empty"),
    (SECRET[:10] + " " + SECRET[10:], "space or line break at character 11"),
    (SECRET[:10] + "\n" + SECRET[10:], "space or line break at character 11"),
    (SECRET[:5] + "é" + SECRET[5:], "not plain ASCII at character 6"),
])
def test_a_bad_typed_key_is_refused_without_quoting_it(env, use_keyring, typed, words):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    with pytest.raises(InputError) as info:
        store.set("anthropic", typed)
    assert words in str(info.value)
    assert SECRET[:10] not in str(info.value) and SECRET[10:] not in str(info.value)
    assert store.get("anthropic") is None


def test_surrounding_whitespace_of_a_pasted_key_is_dropped(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    store.set("anthropic", f"\t{SECRET}\n")
    assert store.get("anthropic").secret == SECRET


# --- masking and repr -------------------------------------------------------------------------


@pytest.mark.parametrize(("secret", "shown"), [
    ("a", "••••••••"),
    ("12345678", "••••••••"),
    ("sk-12345", "••••••••"),
    ("123456789", "…89"),
    ("abcdefghijkl", "…jkl"),
    ("abcdefghijklmnop", "…mnop"),
    ("sk-abcdefghijklmnop", "…mnop"),  # under 20 characters: no prefix either
    (SECRET, "sk-ant-…a1b2"),
    (OTHER, "sk-proj-…z9y8"),
    ("xk-" + "q" * 30 + "tail", "…tail"),
])
def test_mask(secret, shown):
    assert mask(secret) == shown


@pytest.mark.parametrize("length", range(1, 60))
def test_mask_never_shows_more_than_four_secret_characters(length):
    secret = "".join(chr(ord("A") + (i * 7) % 26) for i in range(length))
    shown = mask(secret).replace("…", "").replace("•", "")
    assert len(shown) <= 4 and len(shown) <= length // 4
    if length <= 8:
        assert shown == ""


def test_key_repr_and_str_never_show_the_secret(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    store.set("anthropic", SECRET)
    key = store.get("anthropic")
    texts = [repr(key), str(key), f"{key}", f"{key!r}", repr([key]), repr({"k": key}), repr(store),
             key.masked(), key.where, repr(key.slot)]
    assert all(SECRET not in text for text in texts)
    assert repr(key) == "Key('anthropic', typed, 'sk-ant-…a1b2')" and str(key) == "sk-ant-…a1b2"
    assert key == Key(SECRET, KeySource.TYPED, key.slot)


def test_an_exception_carrying_a_key_shows_it_masked(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    store.set("anthropic", SECRET)
    key = store.get("anthropic")
    try:
        raise RuntimeError(f"request failed with {key}", key)
    except RuntimeError:
        text = traceback.format_exc()
    assert SECRET not in text and "sk-ant-…a1b2" in text


# --- redaction --------------------------------------------------------------------------------


def test_redact_every_form():
    text = (f"Authorization: Bearer {SECRET}\nx-api-key={OTHER}&q=1\n"
            f'{{"key": "{SECRET}"}} {SECRET.replace("-", "%2D")}')
    out = redact(text, [SECRET, OTHER, "", "  "])
    assert SECRET not in out and OTHER not in out
    assert out.startswith(f"Authorization: Bearer {REDACTED}\nx-api-key={REDACTED}&q=1")


def test_redact_escaped_forms():
    odd = 'ab"cd/ef+gh=ij\\kl'
    out = redact(f'json: {{"k": {__import__("json").dumps(odd)}}} url: ?k={__import__("urllib.parse").parse.quote(odd, safe="")}', [odd])
    assert out == f'json: {{"k": "{REDACTED}"}} url: ?k={REDACTED}'


def test_redact_longer_secret_first():
    assert redact("xx abcdef123456789 yy", ["abcdef", "abcdef123456789"]) == f"xx {REDACTED} yy"


def test_store_redact_knows_env_typed_keyring_and_forgotten_keys(env, use_keyring):
    backend = use_keyring(MemoryKeyring())
    backend.data[(SERVICE, "openai")] = OTHER
    env.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    env.setenv("LIVEFILL_API_KEY_GW_EXAMPLE_COM", "gw-TESTONLY-server-key-77")
    store = KeyStore()
    store.set("anthropic", SECRET)
    store.get("openai-chat")  # read from the keyring: now known
    store.forget("anthropic")
    text = f"{SECRET} {OTHER} {ENV_KEY} gw-TESTONLY-server-key-77 fine"
    assert store.redact(text) == " ".join([REDACTED] * 4 + ["fine"])
    assert store.known_secrets() >= {SECRET, OTHER, ENV_KEY}


def _logger_with_stream(name: str) -> tuple[logging.Logger, io.StringIO, logging.Handler]:
    logger = logging.getLogger(name)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logger.addHandler(handler)
    return logger, stream, handler


def test_log_filter_redacts_messages_args_exceptions_and_child_loggers(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    logger, stream, handler = _logger_with_stream("livefill-test-keys")
    try:
        install_log_redaction(store.known_secrets, logger)
        store.set("anthropic", SECRET)  # typed after the filter was installed: still covered
        key = store.get("anthropic")
        logger.info("sending with %s", key.secret)
        logger.warning(f"header x-api-key: {SECRET}")
        logging.getLogger("livefill-test-keys.child").error("child %r", {"api_key": SECRET})
        try:
            raise ValueError(f"bad key {SECRET}")
        except ValueError:
            logger.exception("request failed")
        logger.info("masked %s", key)
        logger.info("odd format %s %s", SECRET)  # a broken format string still gets redacted
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert SECRET not in out
    assert out.count(REDACTED) >= 5 and "masked sk-ant-…a1b2" in out and "ValueError" in out


def test_log_filter_with_a_fixed_list_and_with_no_secrets():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "key=%s", (SECRET,), None)
    assert RedactingFilter([SECRET]).filter(record) is True
    assert record.getMessage() == f"key={REDACTED}"
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "n=%d", (3,), None)
    assert RedactingFilter(lambda: ()).filter(plain) and plain.getMessage() == "n=3"


def test_store_log_filter_follows_the_store(env, use_keyring):
    use_keyring(MemoryKeyring())
    store = KeyStore()
    log_filter = store.log_filter()
    store.set("openai-chat", OTHER)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "k %s", (OTHER,), None)
    log_filter.filter(record)
    assert OTHER not in record.getMessage()
