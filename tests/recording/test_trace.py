"""Traces (livefill/recording/trace.py, trace_writer.py, recordings.py): writing, crash safety, loading, every bad trace's one-line error, scrubbing.

Every test here (and in test_trace_replay.py) gets its own fake key; after each test every file
under its tmp_path is checked for that key, `Authorization`, `x-api-key` and `Bearer ` — in the
text and in every read's decoded bytes.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest

from livefill.errors import InputError, TraceError, UsageError
from livefill.wire.providers.request import ExtractionRequest
from livefill.extraction.schemas import resolve_schema
from livefill.extraction.scenarios import get_scenario
from livefill.recording.recordings import list_recordings, new_trace_path, summarize
from livefill.recording.trace import load_trace, parse_trace
from livefill.recording.trace_writer import KEPT_HEADERS, TraceWriter, scrub_body, scrub_headers, scrub_url, trace_header

FORBIDDEN = ("authorization", "x-api-key", "bearer ")


@pytest.fixture
def fake_key() -> str:
    """A key no other test uses, so a leak is this test's own."""
    return f"sk-ant-fake-{uuid.uuid4().hex}"


def assert_no_secrets(root: Path, key: str) -> int:
    """Check every file under `root`; return how many trace files were checked."""
    checked = 0
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        texts = [raw.decode("utf-8", "replace")]
        for line in texts[0].splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("b64"), str):
                try:
                    texts.append(base64.b64decode(obj["b64"], validate=True).decode("utf-8", "replace"))
                except ValueError:
                    pass  # a deliberately broken read line
        for text in texts:
            assert key not in text, f"{path} contains the key"
            lowered = text.lower()
            for word in FORBIDDEN:
                assert word not in lowered, f"{path} contains {word!r}"
        checked += 1
    return checked


@pytest.fixture(autouse=True)
def _no_secrets_in_traces(tmp_path, fake_key):
    yield
    assert_no_secrets(tmp_path, fake_key)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def invoice_request(key: str, **kw) -> ExtractionRequest:
    sc = get_scenario("invoice")
    return ExtractionRequest(
        provider=kw.pop("provider", "anthropic"),
        base_url=kw.pop("base_url", "http://127.0.0.1:9/"),
        schema=resolve_schema(sc.schema_name),
        document=sc.document,
        api_key=key,
        **kw,
    )


def write_trace(path: Path, key: str, reads=(b"data: one\n\n", b"data: two\n\n"), *, end=True, **header_kw) -> Path:
    clock = Clock()
    writer = TraceWriter(path, secrets=[key], clock=clock)
    clock.now += 0.010
    writer.begin(trace_header(invoice_request(key), headers={"content-type": "text/event-stream"}, **header_kw))
    for data in reads:
        clock.now += 0.025
        writer.on_read(data)
    if end:
        writer.end("complete")
    else:
        writer.close()
    return path


# --- writing and loading ---------------------------------------------------------------------------


def test_a_written_trace_loads_with_its_reads_times_and_trailer(tmp_path, fake_key):
    path = write_trace(tmp_path / "t.jsonl", fake_key)
    trace = load_trace(path)
    assert trace.header["trace"] == "livefill" and trace.header["version"] == 1
    assert trace.provider == "anthropic" and trace.wire == "anthropic"
    assert trace.status == 200 and trace.headers == {"content-type": "text/event-stream"}
    assert trace.response_ms == pytest.approx(10.0)
    assert [r.t_ms for r in trace.reads] == pytest.approx([35.0, 60.0])
    assert trace.body() == b"data: one\n\ndata: two\n\n"
    assert trace.trailer["end"] == "complete" and not trace.truncated and trace.end == "complete"
    assert trace.schema == invoice_request(fake_key).json_schema()
    assert trace.document == get_scenario("invoice").document
    assert trace.header["started_at"].endswith("Z")
    assert trace.header["request"]["model"] == trace.model
    assert all(line.endswith("}") for line in path.read_text().splitlines())


def test_reads_before_the_header_are_kept_in_order(tmp_path, fake_key):
    clock = Clock()
    writer = TraceWriter(tmp_path / "t.jsonl", clock=clock)
    clock.now += 0.005
    writer.on_read(b"early")
    writer.begin(trace_header(invoice_request(fake_key)))
    writer.on_read(b"late")
    writer.end("stopped", "stopped by the user")
    trace = load_trace(tmp_path / "t.jsonl")
    assert trace.body() == b"earlylate" and trace.end == "stopped"
    assert trace.trailer["reason"] == "stopped by the user"


def test_writer_misuse_is_a_usage_error(tmp_path, fake_key):
    writer = TraceWriter(tmp_path / "t.jsonl")
    with pytest.raises(UsageError):
        writer.end("complete")
    writer.begin(trace_header(invoice_request(fake_key)))
    with pytest.raises(UsageError):
        writer.begin(trace_header(invoice_request(fake_key)))
    writer.end("complete")


def test_every_line_is_on_disk_as_soon_as_it_is_written(tmp_path, fake_key):
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path)
    writer.begin(trace_header(invoice_request(fake_key)))
    writer.on_read(b"abc")
    # not closed: what another process (or a crash right now) sees
    trace = load_trace(path)
    assert trace.body() == b"abc" and trace.truncated and trace.end == "truncated"
    writer.end("complete")


def test_a_killed_writer_leaves_a_truncated_trace_whose_complete_lines_load(tmp_path, fake_key):
    path = write_trace(tmp_path / "t.jsonl", fake_key, end=False)
    with path.open("a") as fh:
        fh.write('{"t_ms": 90.5, "b64": "ZGF0YTog')  # the write in progress when the app was killed
    trace = load_trace(path)
    assert trace.truncated and trace.trailer is None
    assert trace.body() == b"data: one\n\ndata: two\n\n"


def test_the_document_can_be_kept_as_its_hash_only(tmp_path, fake_key):
    path = write_trace(tmp_path / "t.jsonl", fake_key, include_document=False)
    trace = load_trace(path)
    document = get_scenario("invoice").document
    assert trace.document is None and len(trace.header["document_sha256"]) == 64
    first_line = document.strip().splitlines()[0]
    assert first_line not in path.read_text()


def test_the_trace_schema_gives_back_the_bundled_schema(tmp_path, fake_key):
    trace = load_trace(write_trace(tmp_path / "t.jsonl", fake_key))
    source = trace.schema_source()
    assert source.bundled and source.name == "invoice"


# --- bad traces: one line each, naming the file and the line ----------------------------------------


def header_line(**changes) -> str:
    header = trace_header(invoice_request("k" * 30))
    header.update(changes)
    return json.dumps({k: v for k, v in header.items() if v is not None})


READ = '{"t_ms": 1.0, "b64": "YQ=="}'
TRAILER = '{"end": "complete", "reason": null}'

BAD = {
    "unknown version": ([header_line(version=2), READ, TRAILER], 1, "unknown trace version 2"),
    "header missing": (['{"hello": 1}', READ, TRAILER], 1, "header line is missing"),
    "read before the header": ([READ, header_line(), TRAILER], 1, "network read before the header"),
    "truncated line in the middle": ([header_line(), '{"t_ms": 1.0, "b6', READ, TRAILER], 2, "not a JSON line"),
    "bad base64": ([header_line(), READ, '{"t_ms": 2.0, "b64": "@@not base64@@"}', TRAILER], 3, "not valid base64"),
    "time going backwards": ([header_line(), '{"t_ms": 5.0, "b64": "YQ=="}', READ, TRAILER], 3, "t_ms goes backwards"),
    "wrong wire": ([header_line(wire="relay"), READ, TRAILER], 1, "cannot replay"),
    "header lacks fields": ([header_line(schema=None), READ, TRAILER], 1, "lacks schema"),
    "line after the trailer": ([header_line(), TRAILER, READ], 3, "after the trailer"),
    "neither read nor trailer": ([header_line(), '{"t_ms": 1.0}', TRAILER], 2, "expected a read"),
    "not an object": ([header_line(), "[1, 2]", TRAILER], 2, "expected a JSON object"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_bad_trace_gives_one_line_naming_the_file_and_line(tmp_path, case):
    lines, line, words = BAD[case]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError) as info:
        load_trace(path)
    message = str(info.value)
    assert isinstance(info.value, InputError)
    assert "\n" not in message
    assert message.startswith(f"{path}: line {line}: ")
    assert words in message
    assert info.value.line == line and info.value.path == str(path)


def test_an_empty_or_missing_file_is_a_trace_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(TraceError, match="line 1: the trace is empty"):
        load_trace(empty)
    with pytest.raises(TraceError, match="cannot read the trace"):
        load_trace(tmp_path / "nowhere.jsonl")


def test_a_wire_the_replay_server_cannot_speak_loads_when_replay_is_not_asked():
    text = "\n".join([header_line(wire="relay"), READ, TRAILER]) + "\n"
    assert parse_trace(text, replayable=False).wire == "relay"


# --- scrubbing ------------------------------------------------------------------------------------


def test_scrub_url_drops_user_info_and_secret_query_parameters():
    assert scrub_url("https://user:pw@example.com:8443/v1?api-version=2&key=abc&sig=x&token=t") == (
        "https://example.com:8443/v1?api-version=2"
    )
    assert scrub_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"


def test_scrub_headers_keeps_only_what_matters():
    headers = {
        "Authorization": "Bearer x",
        "x-api-key": "k",
        "Set-Cookie": "a=b",
        "cookie": "c=d",
        "Content-Type": "text/event-stream",
        "retry-after": "20",
        "request-id": "req_1",
        "x-request-id": "req_2",
        "server": "uvicorn",
    }
    assert scrub_headers(headers) == {
        "content-type": "text/event-stream",
        "retry-after": "20",
        "request-id": "req_1",
        "x-request-id": "req_2",
    }
    assert set(scrub_headers(headers)) <= set(KEPT_HEADERS)


def test_scrub_body_removes_credentials_at_any_depth_but_keeps_schemas():
    body = {
        "model": "m",
        "api_key": "secret",
        "max_tokens": 100,
        "metadata": {"user_token": "t", "Authorization": "Bearer z", "note": "ok"},
        "tools": [{"name": "x", "input_schema": {"properties": {"token": {"type": "string"}}}}],
    }
    assert scrub_body(body) == {
        "model": "m",
        "max_tokens": 100,
        "metadata": {"note": "ok"},
        "tools": [{"name": "x", "input_schema": {"properties": {"token": {"type": "string"}}}}],
    }


def test_every_known_secret_is_redacted_wherever_it_would_appear(tmp_path, fake_key):
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path, secrets=[fake_key])
    header = trace_header(invoice_request(fake_key), base_url=None)
    header["label"] = f"run with {fake_key}"
    writer.begin(header)
    writer.on_read(f"data: echo {fake_key}\n\n".encode())
    writer.end("failed", f"the key {fake_key} was refused")
    trace = load_trace(path)
    assert fake_key not in path.read_text() and fake_key.encode() not in trace.body()
    assert "[key redacted]" in trace.header["label"]


def test_the_header_of_any_provider_request_has_no_credential(tmp_path, fake_key):
    for provider in ("anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama", "raw"):
        header = trace_header(
            invoice_request(fake_key, provider=provider, base_url=f"https://u:{fake_key}@h.example/v1?key={fake_key}"),
            headers={"authorization": f"Bearer {fake_key}", "content-type": "x"},
        )
        text = json.dumps(header)
        assert fake_key not in text and "authorization" not in text.lower()
        assert header["base_url"] == "https://h.example/v1"
        path = tmp_path / f"{provider}.jsonl"
        writer = TraceWriter(path, secrets=[fake_key])
        writer.begin(header)
        writer.end("complete")
        assert load_trace(path).provider == provider


# --- the recordings folder ------------------------------------------------------------------------


def test_new_trace_paths_are_dated_named_and_never_overwrite(tmp_path):
    first = new_trace_path("invoice / demo", "anthropic", directory=tmp_path, now=0)
    assert first == tmp_path / "1970-01-01_000000_invoice-demo_anthropic.jsonl"
    first.write_text("")
    assert new_trace_path("invoice / demo", "anthropic", directory=tmp_path, now=0).name.endswith("-2.jsonl")


def test_the_recordings_list_shows_good_traces_and_bad_ones_with_their_error(tmp_path, fake_key):
    write_trace(tmp_path / "good.jsonl", fake_key, label="invoice", mode="partial")
    write_trace(tmp_path / "cut.jsonl", fake_key, end=False)
    (tmp_path / "bad.jsonl").write_text('{"t_ms": 1, "b64": ""}\n')
    listed = {s.path.name: s for s in list_recordings(tmp_path)}
    assert set(listed) == {"good.jsonl", "cut.jsonl", "bad.jsonl"}
    good = listed["good.jsonl"]
    assert (good.provider, good.schema_name, good.label, good.mode, good.end, good.reads) == (
        "anthropic", "invoice", "invoice", "partial", "complete", 2,
    )
    assert good.model and good.started_at.endswith("Z") and good.error is None
    assert listed["cut.jsonl"].end == "truncated"
    assert "line 1: a network read before the header" in listed["bad.jsonl"].error
    assert list_recordings(tmp_path / "none") == []
    assert summarize(tmp_path / "good.jsonl") == good  # one file, summarised the same way
    missing = summarize(tmp_path / "gone.jsonl")
    assert missing.error and "gone.jsonl" in missing.error and missing.end == ""


def test_the_recordings_list_reads_only_the_newest_and_only_files_that_changed(tmp_path, fake_key, monkeypatch):
    import os

    import livefill.recording.recordings as recordings_module

    for n in range(5):
        write_trace(tmp_path / f"t{n}.jsonl", fake_key, label=f"run{n}")
        os.utime(tmp_path / f"t{n}.jsonl", (1000 + n, 1000 + n))
    loaded: list[str] = []
    real = recordings_module.load_trace
    monkeypatch.setattr(recordings_module, "load_trace", lambda path, **kw: loaded.append(Path(path).name) or real(path, **kw))
    assert [s.label for s in list_recordings(tmp_path, limit=2)] == ["run4", "run3"]
    assert loaded == ["t4.jsonl", "t3.jsonl"]
    assert [s.label for s in list_recordings(tmp_path, limit=2)] == ["run4", "run3"]
    assert loaded == ["t4.jsonl", "t3.jsonl"]  # unchanged files are not read again
    os.utime(tmp_path / "t3.jsonl", (2000, 2000))
    assert [s.label for s in list_recordings(tmp_path, limit=1)] == ["run3"]
    assert loaded[-1] == "t3.jsonl"


def test_the_suite_wide_trace_check_finds_a_planted_credential(tmp_path_factory):
    from tests.conftest import traces_holding_credentials

    root = tmp_path_factory.mktemp("planted")
    good = root / "good.jsonl"
    good.write_text('{"trace": "livefill", "version": 1}\n{"t_ms": 0.0, "b64": "e30="}\n', encoding="utf-8")
    assert traces_holding_credentials(root) == []
    leaked = base64.b64encode(b"Authorization: Bearer sk-x").decode()
    (root / "bad.jsonl").write_text(f'{{"trace": "livefill", "version": 1}}\n{{"t_ms": 0.0, "b64": "{leaked}"}}\n', encoding="utf-8")
    assert sorted(traces_holding_credentials(root)) == [f"{root / 'bad.jsonl'}: authorization", f"{root / 'bad.jsonl'}: bearer"]


def test_a_trace_names_its_providers_wire_and_every_providers_wire_replays(fake_key):
    from livefill.recording.trace import REPLAY_WIRES
    from livefill.wire.providers.spec import PROVIDER_SPECS

    assert sorted(REPLAY_WIRES) == sorted({s.wire for s in PROVIDER_SPECS.values()})
    for name, spec in PROVIDER_SPECS.items():
        header = trace_header(invoice_request(fake_key, provider=name))
        assert header["provider"] == name and header["wire"] == spec.wire and header["wire"] in REPLAY_WIRES
        assert header["request"]  # the body the provider's wire sends


def test_a_line_nested_deeper_than_json_reads_is_a_trace_error_not_a_crash():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(TraceError, match="line 1.*nested deeper") as info:
        parse_trace(deep + "\n", name="deep.jsonl")
    assert info.value.line == 1
