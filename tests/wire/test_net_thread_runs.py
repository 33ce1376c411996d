"""The runs of test_run_demo against the real demo provider over loopback (every mode on every
wire, every fault, Stop as a real cancel the server sees), with the stream read on the net thread
(livefill.wire.net_thread, LIVEFILL_READ_THREAD=1). Slow: the inner loop runs them once, read on the GUI's loop."""

from __future__ import annotations

import pytest

from tests.session.test_run_demo import (  # noqa: F401 - collected here again, with the fixture below
    test_every_fault_ends_restored_with_its_reason,
    test_every_mode_commits_the_scenario_on_every_wire,
    test_partial_fails_the_moment_an_invalid_value_settles,
    test_relay_faults_end_restored,
    test_stop_is_a_real_cancel_the_server_sees,
)

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _reads_on_the_net_thread(monkeypatch):
    monkeypatch.setenv("LIVEFILL_READ_THREAD", "1")
