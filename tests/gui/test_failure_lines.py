"""A failure says first what the user can do; the app's own (embedded) server is never named as if
it were the problem; a real remote server still is, after the action. Real window and servers."""

from __future__ import annotations

import json

import pytest

from livefill.errors import KeyRefused, RequestRejected
from livefill.session.run_status import Phase
from livefill.wire.providers.http_failures import http_failure, in_process
from tests.gui.conftest import arun, wait_until
from tests.gui.test_window import finished


def _host(url: str) -> str:
    return url.split("://", 1)[1].rstrip("/")


@pytest.mark.parametrize("mode", ["partial", "settled"])  # straight to the demo provider, and through the relay
def test_a_document_the_demo_cannot_read_says_what_to_do_first_without_the_servers_port(make_window, qloop, demo_server, tmp_path, mode):
    # The line led with "127.0.0.1:39653 rejected the request (400): The demo provider knows only ..."
    # and the part saying what to do was elided at its end ("A live provider ex…").
    path = tmp_path / "letter.txt"
    path.write_text("Dear accounting,\nplease find the invoice attached.\n", encoding="utf-8")
    window = make_window(mode=mode)

    async def scenario():
        task = window.documents.open_path(path)
        assert task is not None
        await task
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    status = window.controller.last_status
    assert status.phase is Phase.FAILED
    assert status.reason.startswith("Choose a live provider and give it an API key"), status.reason
    port = _host(demo_server.url)
    line = window.status_line
    assert port not in line.text() and port not in window.run_log.lines()[-1]
    line.resize(420, line.height())  # as narrow as in presentation mode with the History panel open
    shown = line.shown_text() if hasattr(line, "shown_text") else line.text()
    assert "Choose a live provider" in shown, shown  # the part to act on is what stays in view


def test_the_embedded_server_is_not_named_a_remote_one_is_after_the_action(demo_server):
    body = json.dumps({"error": {"type": "invalid_request_error", "message": "Use a smaller document."}}).encode()
    assert in_process(demo_server.url) and not in_process("https://api.anthropic.com")
    own = http_failure(400, body, url=demo_server.url + "/v1/messages")
    assert isinstance(own, RequestRejected) and _host(demo_server.url) not in own.message
    assert own.message == "Use a smaller document. (400 invalid_request_error)"
    remote = http_failure(400, body, url="https://llm.example.test:8443/v1/messages")
    assert remote.message == "Use a smaller document. (400 invalid_request_error from llm.example.test:8443)"
    refused = http_failure(401, b"", url="https://api.anthropic.com/v1/messages")
    assert isinstance(refused, KeyRefused) and refused.message == "check the API key: api.anthropic.com refused it (401)"
    assert refused.host == "api.anthropic.com"  # the field still says where, for whoever needs it
