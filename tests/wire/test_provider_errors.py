"""Errors a person can act on: every HTTP fault on every wire, refused connections, DNS, TLS and a
huge error body, over loopback against the demo provider (and servers of our own) — each ends in
its typed error, one line naming the host, and a form restored exactly."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from livefill.demo.protocol import HTTP_FAULTS, DemoKnobs, FaultName
from livefill.errors import (
    CannotConnect,
    HostNotFound,
    KeyRefused,
    ModelNotFound,
    NothingListening,
    ProviderHTTPError,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
    TLSFailed,
    UpstreamError,
)
from livefill.extraction.form import FormModel
from livefill.recording.history import History
from livefill.wire.providers import open_stream
from livefill.wire.providers.request import DEFAULT_MODELS, ExtractionRequest
from livefill.wire.providers.http_failures import http_failure, in_process, retry_after
from livefill.relay.client import open_relay
from livefill.extraction.modes import Mode
from livefill.session.failure_reasons import describe_failure
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import resolve_schema, schema_model
from livefill.demo.wires import RETRY_AFTER_S
from livefill.demo.wires.anthropic import REFUSALS as ANTHROPIC_REFUSALS
from livefill.demo.wires.ollama import REFUSALS as OLLAMA_REFUSALS
from livefill.demo.wires.openai_chat import OPENAI_REFUSALS
from tests.serving.raw_http import RawServer, closed_port

WIRES = ["anthropic", "openai-chat", "openai-responses", "ollama"]
FAULTS = [f.value for f in HTTP_FAULTS]
PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "ollama": "/api/chat",
}
SCENARIO = get_scenario("invoice")


def host(url: str) -> str:
    return url.split("://", 1)[1].rstrip("/")


def expected(provider: str, fault: FaultName, url: str) -> tuple[type[ProviderHTTPError], int, str, str]:
    """(class, status, provider's message, the one line) the demo provider's fault must become."""
    h, model = host(url), DEFAULT_MODELS[provider]
    if provider == "anthropic":
        status, kind, message = ANTHROPIC_REFUSALS[fault]
    elif provider == "ollama":
        (status, message), kind = OLLAMA_REFUSALS[fault], ""
    else:
        status, kind, _code, _param, message = OPENAI_REFUSALS[fault]
    message = " ".join(message.format(model=model).split())
    if provider == "openai-responses" and fault is FaultName.HTTP_400:
        message = (
            "Invalid schema for response_format 'record': 'required' is required to be supplied and to be an "
            "array including every key in properties."
        )
    detail = f"{status}{' ' + kind if kind else ''}: {message}"
    # Each line leads with what to do; the host comes after, and this process's own server (the
    # demo provider here) is never named (its loopback address is not the problem).
    named = not in_process(url)
    server = h if named else "the server"
    if fault is FaultName.HTTP_400:
        return RequestRejected, status, message, f"{message} ({status}{' ' + kind if kind else ''}{' from ' + h if named else ''})"
    if fault in (FaultName.HTTP_401, FaultName.HTTP_403):
        return KeyRefused, status, message, (f"check the API key: {h} refused it ({detail})" if named else
                                             f"check the API key: it was refused ({detail})")
    if fault is FaultName.HTTP_404:
        return ModelNotFound, status, message, f"choose another model: '{model}' was not found{' at ' + h if named else ''} ({detail})"
    if fault is FaultName.HTTP_429:
        return RateLimited, status, message, (f"wait {RETRY_AFTER_S} s and try again: rate limited{' by ' + h if named else ''} "
                                              f"({status}{' ' + kind if kind else ''})")
    if fault is FaultName.HTTP_500:
        return ProviderUnavailable, status, message, f"try again: {server} had a server error ({detail})"
    return ProviderUnavailable, status, message, f"try again: {server} is overloaded ({detail})"


def request(url: str, provider: str, fault: str | None = None) -> ExtractionRequest:
    knobs = DemoKnobs(scenario="invoice", fault=fault)
    return ExtractionRequest(
        provider=provider,
        base_url=url,
        schema=resolve_schema(SCENARIO.schema_name),
        document=SCENARIO.document,
        demo_headers=knobs.headers(),
    )


async def drain(req: ExtractionRequest) -> list[Any]:
    async with open_stream(req, idle_timeout=10.0) as events:
        return [e async for e in events]


def primed_form() -> FormModel:
    form = FormModel(schema_model(SCENARIO.schema_name))
    form.set_value("/customer_name", "Typed by the user")
    form.set_value("/notes", "a note of the user's")
    return form


def config(
    url: str, provider: str, mode: str = "partial", fault: str | None = None, *, demo: bool = True, **kw: Any
) -> RunConfig:
    return RunConfig(
        mode=Mode(mode),
        provider=provider,
        base_url=url,
        schema_name=SCENARIO.schema_name,
        document=SCENARIO.document,
        demo=DemoKnobs(scenario="invoice", fault=fault) if demo else None,
        label="invoice",
        idle_timeout=10.0,
        **kw,
    )


async def fails_restored(form: FormModel, cfg: RunConfig, tmp_path) -> str:
    """Run `cfg` into `form`: it must fail, restore the form exactly and write no history."""
    before, document, states = form.committed, form.document, form.states()
    history = History(tmp_path / "history.jsonl")
    status = await Run(form, cfg, history=history).run()
    assert status.phase is Phase.FAILED, status.reason
    assert form.committed == before and form.document == document and form.states() == states
    assert not history.path.exists()
    assert "\n" not in status.reason and "Traceback" not in status.reason
    return status.reason


# =============================================================================================
# The demo provider's HTTP faults: the wire's own error shape


@pytest.mark.parametrize("provider", WIRES)
@pytest.mark.parametrize("fault", FAULTS)
async def test_each_http_fault_answers_in_the_wires_own_error_shape(demo_server, provider, fault):
    cls, status, message, _line = expected(provider, FaultName(fault), demo_server.url)
    req = request(demo_server.url, provider, fault)
    model = DEFAULT_MODELS[provider]
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": SCENARIO.document}]}
    if provider == "openai-responses":
        body = {"model": model, "stream": True, "input": SCENARIO.document}
    async with httpx.AsyncClient() as client:
        response = await client.post(demo_server.url + PATHS[provider], json=body, headers=req.demo_headers)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    data = response.json()
    if provider == "anthropic":
        assert data["type"] == "error" and set(data["error"]) == {"type", "message"}
        assert data["error"]["message"] == message
        if fault == "overloaded":
            assert (status, data["error"]["type"]) == (529, "overloaded_error")
    elif provider == "ollama":
        assert set(data) == {"error"} and " ".join(data["error"].split()) == message
    else:
        assert set(data["error"]) >= {"message", "type", "code"} and data["error"]["message"] == message
    assert (response.headers.get("retry-after") == str(RETRY_AFTER_S)) == (fault == "http_429")
    entry = [e for e in demo_server.requests() if e["fault"] and e["fault"].startswith(fault)][-1]
    assert entry["outcome"] == "refused" and entry["status"] == status


def test_the_http_faults_are_in_the_one_fault_table():
    from livefill.session.settings import FAULT_NAMES

    for name in ("http_400", "http_401", "http_403", "http_404", "http_429", "http_500", "http_503", "overloaded"):
        assert name in FAULT_NAMES and FaultName(name) in HTTP_FAULTS
    assert "error" in FAULT_NAMES  # the mid-stream error is still there


# =============================================================================================
# Every fault x every wire: the typed error, one line naming the host, the form restored


@pytest.mark.parametrize("provider", WIRES)
@pytest.mark.parametrize("fault", FAULTS)
async def test_each_http_fault_is_its_typed_error_with_one_actionable_line(demo_server, provider, fault):
    cls, status, message, line = expected(provider, FaultName(fault), demo_server.url)
    with pytest.raises(ProviderHTTPError) as info:
        await drain(request(demo_server.url, provider, fault))
    err = info.value
    assert type(err) is cls
    assert err.message == line
    assert (err.status, err.host, err.provider_message) == (status, host(demo_server.url), message)
    assert err.retry_after == (RETRY_AFTER_S if fault == "http_429" else None)
    assert err.code == "upstream_error"
    if cls is ModelNotFound:
        assert err.model == DEFAULT_MODELS[provider]
    assert describe_failure(err) == (line, "upstream_error")


@pytest.mark.parametrize("provider", WIRES)
@pytest.mark.parametrize("fault", FAULTS)
async def test_a_run_meeting_each_http_fault_fails_with_the_line_and_restores_the_form(demo_server, tmp_path, provider, fault):
    _cls, _status, _message, line = expected(provider, FaultName(fault), demo_server.url)
    reason = await fails_restored(primed_form(), config(demo_server.url, provider, fault=fault), tmp_path)
    assert reason == line


@pytest.mark.parametrize("fault", ["http_401", "http_404", "http_429", "overloaded", "http_400"])
@pytest.mark.parametrize("provider", ["anthropic", "ollama"])
async def test_through_the_relay_the_error_record_carries_the_same_line(demo_server, tmp_path, provider, fault):
    _cls, _status, _message, line = expected(provider, FaultName(fault), demo_server.url)
    cfg = config(demo_server.url, provider, "settled", fault=fault, relay_token=demo_server.relay_token)
    reason = await fails_restored(primed_form(), cfg, tmp_path)
    assert reason == line


async def test_the_mid_stream_error_fault_still_fails_as_a_provider_error(demo_server, tmp_path):
    reason = await fails_restored(primed_form(), config(demo_server.url, "anthropic", fault="error"), tmp_path)
    assert reason.startswith("provider error") and "overloaded_error" in reason


# =============================================================================================
# No connection: refused, DNS, TLS


@pytest.mark.parametrize("provider", WIRES)
async def test_connection_refused_says_nothing_is_listening(tmp_path, provider):
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(NothingListening) as info:
        await drain(request(url, provider))
    line = (f"start Ollama, or check its address: it is not running at {url}" if provider == "ollama" else
            f"start the server, or check the address: nothing is listening at {url}")
    assert info.value.message == line and info.value.url == url and info.value.host == host(url)
    assert info.value.code == "upstream_error"
    assert await fails_restored(primed_form(), config(url, provider), tmp_path) == line


async def test_a_relay_nobody_runs_is_nothing_listening(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    line = f"start the server, or check the address: nothing is listening at {url}"
    with pytest.raises(NothingListening, match=f"^{line}$"):
        async with open_relay(url, "token", {"scenario": "invoice", "mode": "settled"}) as records:
            [r async for r in records]
    cfg = config(url, "anthropic", "settled", relay_token="token")
    assert await fails_restored(primed_form(), cfg, tmp_path) == line


async def test_a_wrong_relay_token_is_a_refused_key(demo_server, tmp_path):
    cfg = config(demo_server.url, "anthropic", "settled", relay_token="wrong")
    reason = await fails_restored(primed_form(), cfg, tmp_path)
    assert reason.startswith("check the API key: it was refused (401")  # the app's own relay: not named


@pytest.mark.parametrize("provider", WIRES)
async def test_a_host_that_does_not_resolve_says_so_quickly(tmp_path, provider, timing):
    url = "http://livefill-no-such-host.invalid:8080"
    started = time.monotonic()
    with pytest.raises(HostNotFound) as info:
        await drain(request(url, provider))
    timing.record(f"{provider}: a host that does not resolve, said", time.monotonic() - started, budget=10.0)
    assert info.value.message.startswith("check the address: cannot resolve livefill-no-such-host.invalid")
    assert info.value.host == "livefill-no-such-host.invalid:8080"
    reason = await fails_restored(primed_form(), config(url, provider), tmp_path)
    assert reason.startswith("check the address: cannot resolve livefill-no-such-host.invalid")


@pytest.mark.parametrize("provider", WIRES)
async def test_tls_to_a_plain_http_server_is_a_failed_handshake(demo_server, tmp_path, provider):
    url = demo_server.url.replace("http://", "https://")
    with pytest.raises(TLSFailed) as info:
        await drain(request(url, provider))
    line = f"check the address: the TLS handshake with {host(url)} failed: wrong version number (is it a plain http:// server?)"
    assert info.value.message == line and isinstance(info.value, CannotConnect)
    assert await fails_restored(primed_form(), config(url, provider), tmp_path) == line


# =============================================================================================
# A huge error body is never read whole

HUGE = 100 * 1024 * 1024


class HugeErrorServer(RawServer):
    """A raw asyncio server answering every request with a 500 whose Content-Length is 100 MB, and
    writing it as fast as the client takes it; it counts what it managed to write."""

    def __init__(self, content_type: str = "application/json") -> None:
        super().__init__(self._answer)
        self.content_type = content_type
        self.written = 0
        self.client_left = asyncio.Event()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = (
                f"HTTP/1.1 500 Internal Server Error\r\ncontent-type: {self.content_type}\r\n"
                f"content-length: {HUGE}\r\n\r\n"
            ).encode()
            writer.write(head)
            chunk = b'{"error": {"message": "' + b"x" * (1024 * 1024 - 24)
            while self.written < HUGE:
                writer.write(chunk[: HUGE - self.written])
                await writer.drain()
                self.written += len(chunk[: HUGE - self.written])
                chunk = b"x" * (1024 * 1024)
        finally:
            self.client_left.set()


@pytest.mark.parametrize("provider", WIRES)
async def test_a_100_mb_error_body_is_read_only_to_the_cap(tmp_path, provider):
    srv = HugeErrorServer()
    async with srv as url:
        with pytest.raises(ProviderUnavailable) as info:
            async with asyncio.timeout(30):
                await drain(request(url, provider))
        async with asyncio.timeout(10):
            await srv.client_left.wait()
    assert srv.written < HUGE // 4, f"the client read {srv.written} bytes of a {HUGE}-byte error body"
    err = info.value
    assert err.status == 500 and err.message.startswith(f"try again: {host(url)} had a server error (500: ")
    assert len(err.message) < 400 and len(err.provider_message) <= 300


async def test_a_run_meeting_a_100_mb_error_body_fails_fast_with_one_line(tmp_path, timing):
    srv = HugeErrorServer()
    async with srv as url:
        started = time.monotonic()
        reason = await fails_restored(primed_form(), config(url, "openai-chat", demo=False), tmp_path)
        timing.record("a run failing on a 100 MB error body", time.monotonic() - started, budget=20.0)
    assert reason.startswith(f"try again: {host(url)} had a server error (500")
    assert srv.written < HUGE // 4


# =============================================================================================
# The translation's rules, without a server


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "20"}, 20.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "2500", "retry-after": "9"}, 2.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, 30.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(headers, seconds):
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after(headers, now=now) == seconds


def test_an_http_date_retry_after_is_shown_in_seconds():
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 42))
    err = http_failure(429, b'{"error":{"message":"slow down","type":"rate_limit_error"}}',
                       url="https://api.anthropic.com/v1/messages", headers={"retry-after": when})
    assert isinstance(err, RateLimited) and 40 <= err.retry_after <= 42
    assert err.message.startswith("wait 4") and " s and try again: rate limited by api.anthropic.com (429" in err.message


@pytest.mark.parametrize(
    ("status", "body", "cls", "line"),
    [
        (401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, KeyRefused,
         "check the API key: api.anthropic.com refused it (401 authentication_error: invalid x-api-key)"),
        (404, {"detail": "Not Found"}, ProviderHTTPError,
         "check the base URL: api.anthropic.com has nothing at /v1/messages (404: Not Found)"),
        (404, "<html>404 Not Found</html>", ProviderHTTPError,
         "check the base URL: api.anthropic.com has nothing at /v1/messages (404: <html>404 Not Found</html>)"),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, ProviderUnavailable,
         "try again: api.anthropic.com is overloaded (529 overloaded_error: Overloaded)"),
        (502, b"", ProviderUnavailable, "try again: api.anthropic.com had a server error (502)"),
        (413, {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}, RequestRejected,
         "Request exceeds the maximum size (413 request_too_large from api.anthropic.com)"),
        (400, {"error": {"type": "invalid_request_error", "message": "line one\nline two"}}, RequestRejected,
         "line one line two (400 invalid_request_error from api.anthropic.com)"),
    ],
)
def test_http_failure_lines(status, body, cls, line):
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    err = http_failure(status, raw, url="https://api.anthropic.com/v1/messages", model="claude-x")
    assert type(err) is cls and err.message == line and err.status == status
    assert isinstance(err, UpstreamError)


def test_a_key_the_provider_echoes_is_masked():
    key = "sk-livefill-unique-0123456789"
    body = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error"}}
    err = http_failure(401, json.dumps(body).encode(), url="https://api.openai.com/v1/chat/completions", secret=key)
    assert key not in err.message and key not in err.provider_message and "***" in err.message


def test_a_certificate_that_does_not_verify_is_named():
    import ssl

    from livefill.wire.providers.http_failures import connect_failure

    cause = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    cause.verify_message = "self-signed certificate"
    exc = httpx.ConnectError("boom")
    exc.__cause__ = cause
    err = connect_failure(exc, "https://llm.example.test:8443/v1/chat/completions")
    assert isinstance(err, TLSFailed) and err.url == "https://llm.example.test:8443"
    assert err.message == ("check the address: the TLS handshake with llm.example.test:8443 failed: "
                           "certificate verify failed: self-signed certificate")
    assert connect_failure(httpx.ConnectError("no cause"), "http://x") is None


QASYNC_SCRIPT = """
import asyncio, gc
import qasync
from PySide6.QtWidgets import QApplication
from livefill.errors import ProviderHTTPError
from livefill.wire.providers import open_stream
from livefill.wire.providers.request import ExtractionRequest
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import resolve_schema
from livefill.demo.knobs import DemoDefaults
from livefill.embedded.server import EmbeddedServer

HUGE = 100 * 1024 * 1024
finished = []  # huge-body connections the client has left

async def huge(reader, writer):
    try:
        await reader.readuntil(b"\\r\\n\\r\\n")
        writer.write(f"HTTP/1.1 500 Oops\\r\\ncontent-type: application/json\\r\\ncontent-length: {HUGE}\\r\\n\\r\\n".encode())
        for _ in range(100):
            writer.write(b"x" * (1024 * 1024))
            await writer.drain()
    except ConnectionError:
        finished.append(True)
    finally:
        writer.close()

async def main(url):
    big = await asyncio.start_server(huge, "127.0.0.1", 0)
    big_url = f"http://127.0.0.1:{big.sockets[0].getsockname()[1]}"
    sc = get_scenario("invoice")
    for provider in ("anthropic", "openai-chat", "openai-responses", "ollama"):
        for base, headers in ((url, {"x-demo-fault": "http_429"}), (big_url, {})):
            request = ExtractionRequest(provider=provider, base_url=base, schema=resolve_schema("invoice"),
                                        document=sc.document, demo_headers=headers)
            try:
                async with open_stream(request) as events:
                    async for event in events:
                        pass
            except ProviderHTTPError:
                pass
            gc.collect()
    for _ in range(500):  # every huge body's connection was closed by the client, not read to its end
        if len(finished) == 4:
            break
        await asyncio.sleep(0.01)
    big.close()
    print("errors done" if len(finished) == 4 else f"the client left {len(finished)} of 4 huge bodies", flush=True)

server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
url = server.start()
app = QApplication([])
qasync.run(main(url))
gc.collect()
server.stop()
"""


@pytest.mark.slow
def test_error_bodies_read_to_the_cap_under_qasync_leave_nothing_behind():
    from tests.wire.test_providers_qasync import run_silently

    run_silently(QASYNC_SCRIPT, "errors done")


def test_a_placeholder_key_is_not_masked_out_of_the_providers_words():
    body = b'{"error": {"message": "The demo provider knows only its bundled scenarios", "type": "invalid_request_error"}}'
    err = http_failure(400, body, url="http://127.0.0.1:1/v1/chat/completions", secret="demo")
    assert err.provider_message == "The demo provider knows only its bundled scenarios"
