"""LaneMetrics.summary() while a run streams: its work is what changed, not the run so far.

The metrics table asks every lane's summary a few times a second; the first and last settled
times and the byte-to-pixel percentiles are kept as values come, not found again by a walk over
every settled field and a sort of every latency on each call. Counted in the items the module's
min / max / sorted look at, not timed; the figures stay those of a walk and a sort.
"""

from __future__ import annotations

import builtins

from livefill.session import metrics as metrics_module
from livefill.session.metrics import LaneMetrics, percentile


def _counting(monkeypatch) -> list[int]:
    """Count the items the metrics module's min / max / sorted are given."""
    scanned = [0]

    def counted(real):  # noqa: ANN001, ANN202
        def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            items = list(args[0]) if len(args) == 1 else list(args)
            scanned[0] += len(items)
            return real(items, **kwargs)
        return call

    for name in ("min", "max", "sorted"):
        monkeypatch.setattr(metrics_module, name, counted(getattr(builtins, name)), raising=False)
    return scanned


def _stream(fields: int, scanned: list[int] | None, last: int = 50) -> tuple[LaneMetrics, list[int]]:
    """A run settling `fields` values one by one, each painted, the summary asked after each."""
    final = {"items": [{"sku": f"S-{i}"} for i in range(fields)]}
    m = LaneMetrics(final=final)
    m.start(100.0)
    m.read_time = lambda pointer: 100.0 + int(pointer.split("/")[2]) * 0.01
    per_summary = []
    for i in range(fields):
        pointer, t = f"/items/{i}/sku", 100.0 + i * 0.01
        m.display(pointer, f"S-{i}"[: 2 + i % 3], provisional=True, t=t)  # a prefix first, marked
        m.display(pointer, f"S-{i}", provisional=False, t=t + 0.002)
        m.settled(pointer, t + 0.002)
        m.painted(pointer, t + 0.002 + (i * 7919 % 97) * 0.0001)  # latencies in no order
        before = scanned[0] if scanned is not None else 0
        m.summary()
        if i >= fields - last and scanned is not None:
            per_summary.append(scanned[0] - before)
    return m, per_summary


def test_a_summary_costs_the_same_after_600_settled_values_as_after_100(monkeypatch):
    scanned = _counting(monkeypatch)
    _, short = _stream(100, scanned)
    _, long = _stream(600, scanned)
    assert max(long) <= max(short) <= 4, (short, long)  # a couple of times compared, no walk


def test_the_figures_are_those_of_a_walk_and_a_sort():
    m, _ = _stream(300, None)
    s = m.summary()
    ordered = sorted(m.latencies)
    assert s.byte_to_pixel == (percentile(ordered, 50), percentile(ordered, 99), ordered[-1])
    ok_times = [100.0 + i * 0.01 + 0.002 for i in range(300)]
    assert s.first_settled == min(ok_times) - 100.0 and s.all_settled == max(ok_times) - 100.0
    assert s.settled == s.fields == 300
    # the first settled field is marked provisional again, then the last one: both found again
    m.display("/items/0/sku", "S-", provisional=True, t=105.0)
    m.display("/items/299/sku", "S-2", provisional=True, t=105.1)
    s = m.summary()
    assert s.first_settled == ok_times[1] - 100.0 and s.all_settled is None and s.settled == 298
    m.display("/items/299/sku", "S-299", provisional=False, t=105.2)
    m.display("/items/0/sku", "S-0", provisional=False, t=105.3)
    s = m.summary()
    assert (s.first_settled, s.all_settled) == (ok_times[1] - 100.0, 105.3 - 100.0)
    shelved = m.shelve()
    m.clear()
    assert m.summary().first_settled is None and m.summary().byte_to_pixel is None
    m.unshelve(shelved)
    assert (m.summary().first_settled, m.summary().all_settled) == (ok_times[1] - 100.0, 105.3 - 100.0)
