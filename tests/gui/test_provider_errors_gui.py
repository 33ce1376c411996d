"""The window shows an HTTP fault's one line in the status line and the run log, and restores."""

from __future__ import annotations

import pytest

from livefill.session.run_status import Phase
from tests.gui.conftest import arun, wait_until
from tests.gui.test_window import finished


def host(url: str) -> str:
    return url.split("://", 1)[1].rstrip("/")


# Each line leads with what to do; the app's own (embedded) demo server's address is never shown.
CASES = [
    ("http_401", "anthropic", "partial", "check the API key: it was refused (401 authentication_error: invalid x-api-key)"),
    ("http_429", "openai-chat", "partial", "wait 20 s and try again: rate limited (429 tokens)"),
    ("overloaded", "ollama", "blocking", "try again: the server is overloaded (503: server busy, please try again. maximum pending requests exceeded)"),
    ("http_404", "anthropic", "settled", "choose another model: 'claude-sonnet-5' was not found (404 not_found_error: model: claude-sonnet-5)"),
]


@pytest.mark.parametrize(("fault", "provider", "mode", "line"), CASES)
def test_an_http_fault_is_one_line_in_the_status_and_the_run_log(make_window, qloop, demo_server, fault, provider, mode, line):
    from livefill.wire.providers.request import DEFAULT_MODELS

    line = line.format(host=host(demo_server.url))
    if fault == "http_404":
        assert DEFAULT_MODELS[provider] in line
    window = make_window(provider=provider, mode=mode)
    window.form.set_value("/customer_name", "Kept SA")
    before, states = window.form.committed, window.form.states()
    window.set_fault(fault)

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    status = window.controller.last_status
    assert status.phase is Phase.FAILED
    assert status.reason == line
    assert line in window.status_line.text(), window.status_line.text()
    assert host(demo_server.url) not in window.status_line.text()  # the embedded server is not the problem
    last = window.run_log.lines()[-1]
    assert "failed" in last and line in last, last
    assert "Traceback" not in window.status_line.text() and "\n" not in last
    assert window.form.document == before and window.form.states() == states
    assert window.field("/customer_name").property("displayValue") == "Kept SA"
