"""What any client may make a local server keep is bounded, with no token needed (issue 27, 3).

Over real loopback sockets (127.0.0.1, port 0), against the embedded server: POSTed traces keep
the newest `POSTED_TRACES` / `POSTED_TRACE_BYTES`; a 100,000-deep trace is a clean 400; a request
head past `MAX_HEAD_BYTES` is a 431 and an `x-demo-tag` past `MAX_LABEL_CHARS` a 400 naming it (the
relay body's `demo.tag` has the same limit); `GET /_demo/requests` serves pages (default, maximum,
a byte cap) so a reader that never reads pins one page at most; an entry's client text is clipped.
Memory (RSS) figures for the same hostile cases: tests/benchmarks/bench_hostile_stores.py.
"""

from __future__ import annotations

import base64
import json
import logging
import socket

import httpx
import pytest

from livefill.demo.knobs import DemoDefaults
from livefill.demo.protocol import MAX_LABEL_CHARS
from livefill.demo.provider import POSTED_TRACES
from livefill.demo.request_log import LOG_ENTRIES, PAGE_BYTES, PAGE_DEFAULT, PAGE_MAX, SENT_MS_MAX, TEXT_CHARS, RequestLog
from livefill.embedded.server import EmbeddedServer
from livefill.defaults import MAX_HEAD_BYTES

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def server():
    srv = EmbeddedServer(defaults=DemoDefaults(speed=0, ttft_ms=0), warm=False)
    srv.start()
    yield srv
    srv.stop()


def trace_body(reads: int = 3, pad: int = 0) -> bytes:
    header = {
        "trace": "livefill", "version": 1, "provider": "anthropic", "wire": "anthropic", "schema": {"type": "object"},
        "request": {"model": "m"}, "started_at": "2026-12-01T00:00:00.000Z", "status": 200,
        "headers": {"content-type": "text/event-stream"}, "document": "x" * pad,
    }
    lines = [json.dumps(header)]
    lines += [json.dumps({"t_ms": float(i), "b64": base64.b64encode(b"event: ping\n\n").decode()}) for i in range(reads)]
    lines.append(json.dumps({"end": "complete", "reason": None, "t_ms": float(reads)}))
    return ("\n".join(lines) + "\n").encode()


def test_posted_traces_keep_only_the_newest(server):
    demo = server.app.state.demo
    body = trace_body()
    with httpx.Client(timeout=30) as client:
        ids = [client.post(server.url + "/_demo/traces", content=body).json()["id"] for _ in range(POSTED_TRACES + 8)]
        assert len(demo.posted) == POSTED_TRACES
        assert demo.posted.get(ids[0]) is None and demo.posted.get(ids[-1]) is not None
        # The oldest is gone: replaying it is one clear line, not a crash.
        gone = client.post(
            server.url + "/v1/messages", headers={**JSON, "x-demo-replay": ids[0]},
            json={"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
        assert gone.status_code == 400 and f"last {POSTED_TRACES} posted traces" in gone.text


def test_posted_traces_are_bounded_in_bytes_too(server):
    demo = server.app.state.demo
    big = trace_body(pad=300_000)
    old_size = demo.posted.size
    demo.posted.size = 4 * len(big)
    try:
        with httpx.Client(timeout=30) as client:
            for _ in range(10):
                assert client.post(server.url + "/_demo/traces", content=big).status_code == 200
            assert demo.posted.bytes <= demo.posted.size
            demo.posted.size = len(big) - 1
            refused = client.post(server.url + "/_demo/traces", content=big)
        assert refused.status_code == 413 and "at most" in refused.json()["error"]["message"]
    finally:
        demo.posted.size = old_size


def test_a_deeply_nested_trace_is_a_clean_400(server, caplog):
    caplog.set_level(logging.ERROR)
    header = trace_body().split(b"\n", 1)[0]
    for deep in (b"[" * 100_000, header + b"\n" + b'{"t_ms": ' + b"[" * 100_000):
        with httpx.Client(timeout=30) as client:
            answer = client.post(server.url + "/_demo/traces?name=deep.jsonl", content=deep)
        assert answer.status_code == 400, answer.text[:200]
        assert answer.json()["error"]["type"] == "invalid_trace"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no server traceback


def _raw_get(server, path: str, extra: bytes = b"") -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n" % server.port + extra + b"connection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]), data


def test_one_header_limit_everywhere(server):
    messages = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(timeout=30) as client:
        huge = client.post(server.url + "/v1/messages", headers={**JSON, "x-demo-tag": "t" * 30_000}, json=messages)
        assert huge.status_code == 431 and str(MAX_HEAD_BYTES) in huge.text
        long = client.post(
            server.url + "/v1/messages",
            headers={**JSON, "x-demo-tag": "t" * (MAX_LABEL_CHARS + 1), "x-demo-scenario": "weather"}, json=messages,
        )
        assert long.status_code == 400 and "x-demo-tag" in long.text and str(MAX_LABEL_CHARS) in long.text
        fits = client.post(
            server.url + "/v1/messages",
            headers={**JSON, "x-demo-tag": "t" * MAX_LABEL_CHARS, "x-demo-scenario": "weather"}, json=messages,
        )
        assert fits.status_code == 200
        relay = {"authorization": f"Bearer {server.relay_token}", **JSON}
        body = {"scenario": "weather", "provider": "anthropic", "demo": {"tag": "t" * (MAX_LABEL_CHARS + 1)}}
        assert client.post(server.url + "/relay/v1/extract", headers=relay, json=body).status_code == 400
    tags = [e["tag"] for e in server.requests()]
    assert "t" * MAX_LABEL_CHARS in tags and all(t is None or len(t) <= MAX_LABEL_CHARS for t in tags)
    assert _raw_get(server, "/_demo/requests?x=" + "q" * (MAX_HEAD_BYTES // 2), b"x-filler: %s\r\n" % (b"f" * (MAX_HEAD_BYTES // 2)))[0] in (400, 431)


def test_request_log_is_served_in_pages(server):
    demo = server.app.state.demo
    demo.log.clear()
    with httpx.Client(timeout=30) as client:
        for _ in range(PAGE_DEFAULT + 60):  # refused (a body that is not JSON): each still logged
            client.post(server.url + "/v1/messages", headers=JSON, content=b"not json")
        newest = client.get(server.url + "/_demo/requests")
        assert newest.status_code == 200
        assert len(newest.json()) == PAGE_DEFAULT
        total, first = int(newest.headers["x-total-count"]), int(newest.headers["x-offset"])
        assert first == total - PAGE_DEFAULT
        ids = [e["id"] for e in demo.requests()]
        assert [e["id"] for e in newest.json()] == ids[-PAGE_DEFAULT:]
        oldest = client.get(server.url + f"/_demo/requests?offset={total - PAGE_DEFAULT - 60}&limit=25").json()
        assert [e["id"] for e in oldest] == ids[:25]
        assert len(client.get(server.url + "/_demo/requests?limit=99999999").json()) <= PAGE_MAX
        for bad_limit in ("-1", "%C2%B2", "x"):  # "²" is a digit to str.isdigit, not to int()
            bad = client.get(server.url + f"/_demo/requests?limit={bad_limit}")
            assert bad.status_code == 400 and "limit" in bad.json()["error"]["message"]


def test_entries_keep_clipped_text_and_pages_are_capped_in_bytes(server):
    demo = server.app.state.demo
    demo.log.clear()
    with httpx.Client(timeout=30) as client:
        # An unknown scenario's error echoes the header: its entry keeps at most TEXT_CHARS of it.
        hi = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        client.post(server.url + "/v1/messages", headers={**JSON, "x-demo-scenario": "s" * 12_000}, json=hi)
        model = {**hi, "model": "m" * 500_000}
        client.post(server.url + "/v1/messages", headers={**JSON, "x-demo-fault": "http_401"}, json=model)
        entries = demo.requests()
        assert len(entries) == 2 and "unknown scenario" in entries[0]["error"]
        assert all(len(e["error"] or "") < TEXT_CHARS + 40 and len(e["model"] or "") < TEXT_CHARS for e in entries)
        # A page never grows past PAGE_BYTES, however many entries it may hold.
        for _ in range(600):
            client.post(server.url + "/v1/messages", headers={**JSON, "x-demo-scenario": "s" * 3000}, json=hi)
        page = client.get(server.url + f"/_demo/requests?limit={PAGE_MAX}")
        assert len(page.content) <= PAGE_BYTES + TEXT_CHARS * 8
        assert 0 < len(page.json()) == int(page.headers["x-count"]) < 600


def test_the_log_keeps_its_newest_entries_and_a_replay_its_first_send_times():
    log = RequestLog()
    for _ in range(LOG_ENTRIES + 10):
        entry = log.new(path="/v1/messages", wire="anthropic", auth=None)
    for i in range(SENT_MS_MAX * 3):
        entry.sent_ms.append(float(i))
    assert len(log.snapshot()) == LOG_ENTRIES and len(entry.sent_ms) == SENT_MS_MAX
    body, first, count, total = log.page(0, 5)
    assert (first, count, total) == (10, 5, LOG_ENTRIES + 10) and len(json.loads(body)) == 5
