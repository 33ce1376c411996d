"""Lane metrics: how soon a lane showed something, when it had it all, and how often it lied.

A compare-view lane reports every value it displays for a field (`LaneMetrics.display`): the
pointer, the value shown, whether it was visibly marked provisional, and when. Once the run's
own final values are known (`set_final`: its committed object, or the scenario's expected output;
never an earlier run's: `start` forgets them) each display is judged:

- equal to the field's final value                      -> true (counts nowhere)
- different, and visibly marked provisional             -> "provisional, later changed"
- different, and NOT visibly marked provisional         -> "never true": the naive lane's "Mar"
                                                           for "Martinez SA", and 12 for 1200

Until then only what the run itself has contradicted counts, "so far": a display the lane later
replaced with a different value (`MetricsSummary.final_known` False; a widget must not accuse).

It also times "byte to pixel": from the network read that carried a value's settling byte to the
first paint of its widget showing it settled. Beside the values, each run's `RunFacts` (wire
counts, tokens from the `usage` tap on its wire, score, cost: livefill.session.run_facts) are kept
here too, set by the scoreboard (`set_facts`) and forgotten with the run. What counts as a display, how a field settles and
how the latency is measured: docs/notes/lane-metrics.md. The form's side is
livefill.session.form_probe.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from livefill.observers import Observers
from livefill.session.metric_values import (
    _identical,
    _is_blank,
    _is_empty,
    format_ms,
    format_seconds,
    leaves,
    percentile,
    same_value,
)
from livefill.session.run_facts import RunFacts
from livefill.wire.usage import UsageTap

__all__ = ["Display", "LaneMetrics", "MetricsSummary", "Verdict", "format_ms", "format_seconds", "percentile", "leaves",
           "same_value"]


class Verdict(Enum):
    TRUE = "true"  # the display equals the field's final value
    PROVISIONAL_CHANGED = "provisional_changed"  # differs from the final value, marked provisional
    NEVER_TRUE = "never_true"  # differs from the final value, shown as if it were true
    UNKNOWN = "unknown"  # the final value is not known yet


@dataclass(frozen=True, kw_only=True, slots=True)
class Display:
    """A lane showed `value` for `pointer` at `t` (seconds after start), marked provisional or not."""

    pointer: str
    value: Any
    provisional: bool
    t: float


@dataclass(frozen=True, kw_only=True, slots=True)
class MetricsSummary:
    """A lane's figures at one moment.

    `first_value`: seconds from start to the first visible value (None: nothing shown yet).
    `all_settled`: seconds from start until every field showed its final value unmarked (None:
    not (yet) reached, or final values unknown). `never_true` / `provisional_changed`: the counts
    described in the module docstring. `displays`: value changes shown. `settled` / `fields`:
    leaves showing their final value unmarked / leaves in the final object (0 if unknown).
    `examples`: the first few never-true displays as (pointer, value). `outcome`: None while the
    lane runs, else how it ended ("committed", "stopped", "failed: ..."); `elapsed` the run time.
    `byte_to_pixel`: (p50, p99, max) seconds from the read carrying a value's settling byte to the
    paint showing it settled, over `painted` values (None: none measured); `unpainted`: values
    shown settled in the form whose paint was not (yet) seen. `first_settled`: seconds from start
    to the first of the fields now showing their final value unmarked (the counterpart of
    `all_settled`, the last; None: none, or final values unknown). `facts`: the run's wire counts, tokens, score and cost.
    """

    first_value: float | None
    all_settled: float | None
    never_true: int
    provisional_changed: int
    displays: int
    settled: int
    fields: int
    final_known: bool
    examples: tuple[tuple[str, Any], ...]
    outcome: str | None
    elapsed: float | None
    started: bool = False  # a run of this lane has begun (False: nothing has run yet)
    byte_to_pixel: tuple[float, float, float] | None = None
    painted: int = 0
    unpainted: int = 0
    first_settled: float | None = None
    facts: RunFacts = field(default_factory=RunFacts)

    @property
    def accuses(self) -> bool:
        """Some value shown was never true, judged against the run's own final values: only then
        may a widget say so with a warning sign or a colour (before, the count is "so far")."""
        return self.final_known and self.never_true > 0


_NOTHING = object()
_MAX_EXAMPLES = 5
_NOT_SHELVED = frozenset({"_observers", "_fixed"})  # the lane's own; every other attribute is one run's


class LaneMetrics:
    """Collects one lane's displays and judges them (see the module docstring).

    Plain-Python observers: `subscribe(callback)` returns an unsubscribe function; callbacks get
    no arguments and run synchronously after every change (a widget should coalesce repaints).
    """

    def __init__(self, *, final: Any = _NOTHING) -> None:
        self._observers: Observers[None] = Observers()
        self._fixed = final  # the final values of every run (given here), else each run's own
        self._final: dict[str, Any] | None = None
        self._required: dict[str, Any] = {}  # final leaves that must show their value (not empty)
        self._start = 0.0
        self._started = False
        #: when the read carrying a pointer's settling byte arrived (set per run; None: unknown)
        self.read_time: Callable[[str], float | None] | None = None
        self._reset()
        self._set_final(final)

    # -- feeding --------------------------------------------------------------------------------

    def start(self, t: float) -> None:
        """A new run begins at `t`: forget earlier displays and the earlier run's final values (a
        run is judged by its own: `set_final`; those given to the constructor stand for every run)."""
        self._start = t
        self._started = True
        self._reset()
        self._set_final(self._fixed)
        self._notify()

    def clear(self) -> None:
        """Forget the last run: no figures, no outcome, not started (the lane shows another document,
        or its form was cleared: that run's figures describe nothing on screen any more)."""
        self._started = False
        self._start = 0.0
        self._reset()
        self._set_final(self._fixed)
        self._notify()

    def display(self, pointer: str, value: Any, *, provisional: bool, t: float) -> None:
        """The lane now shows `value` for `pointer` (visibly marked provisional or not) at `t`."""
        self.display_many(((pointer, value, provisional, t),))

    def display_many(self, displays: Iterable[tuple[str, Any, bool, float]]) -> None:
        """`display(pointer, value, provisional=..., t=...)` for each, told to subscribers once."""
        for pointer, value, provisional, t in displays:
            if isinstance(value, (dict, list, tuple)) and value:
                for leaf, v in leaves(value, pointer):
                    self._display_leaf(leaf, v, provisional, t)
            else:
                self._display_leaf(pointer, value, provisional, t)
        self._notify()

    def shelve(self) -> object:
        """Everything measured of the last run, for `unshelve` (a form cleared, then put back)."""
        return {name: value for name, value in vars(self).items() if name not in _NOT_SHELVED}

    def unshelve(self, shelved: object) -> None:
        """Show again what `shelve` kept (its containers were left alone: `clear` makes new ones)."""
        assert isinstance(shelved, dict)
        for name, value in shelved.items():
            setattr(self, name, value)
        self._notify()

    def set_facts(self, **changes: Any) -> None:
        """Change some of this run's `RunFacts` (deltas=..., fields_right=...)."""
        facts = replace(self._facts, **changes)
        if facts != self._facts:
            self._facts = facts
            self._notify()

    def set_final(self, document: Any) -> None:
        """The run's final values: the whole extracted object (its committed value, or what the
        scenario is known to produce). Every display of the run is judged again."""
        self._set_final(document)
        self._notify()

    def finish(self, t: float, outcome: str) -> None:
        """The lane's run ended at `t` ("committed", "stopped", "failed: <reason>")."""
        self._outcome = outcome
        self._end = t
        if outcome != "committed":
            self._awaiting.clear()  # the form shows the values from before the run now
        self._notify()

    def settled(self, pointer: str, t: float) -> None:
        """The form shows `pointer` settled from `t` on; its widget's next paint will show it. A
        value settles once a run: later reports of the same pointer (the form re-announcing it
        with a neighbour's update) are not new values to measure."""
        if pointer in self._settled_once:
            return
        self._settled_once.add(pointer)
        self._awaiting[pointer] = t

    def forget_unpainted(self) -> None:
        """The form was cleared or put back outside a run: a value still waiting for its first paint
        (its widget was off screen) will never be painted as the stream showed it; a later paint of
        the same pointer is not a byte-to-pixel latency."""
        if self._awaiting:
            self._awaiting.clear()
            self._notify()

    def painted(self, pointer: str, t: float) -> None:
        """A widget painted `pointer` showing it settled at `t` (only the first paint counts)."""
        if self._awaiting.pop(pointer, None) is None:
            return
        read = self.read_time(pointer) if self.read_time is not None else None
        if read is None:
            return
        latency = max(0.0, t - read)
        self._latencies.append(latency)
        self._latency_log.append((pointer, read - self._start, t - self._start))
        if self._sorted is not None:  # kept in order as values come: no sort per new value
            bisect.insort(self._sorted, latency)
        self._notify()

    # -- reading --------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """A run was started (and not cleared since)."""
        return self._started

    @property
    def log(self) -> tuple[Display, ...]:
        """Every counted display, in order."""
        return tuple(self._log)

    def verdicts(self) -> list[tuple[Display, Verdict]]:
        """Each counted display with its verdict."""
        return [(d, self._judge(i, d)) for i, d in enumerate(self._log)]

    def summary(self) -> MetricsSummary:
        """The figures now."""
        final = self._final
        ok = self._ok
        span = self._ok_span()
        all_settled = None
        if self._required and len(ok) == len(self._required):
            all_settled = span[1] - self._start
        # the fields showing their final value unmarked, kept per display: no walk of the run's log,
        # and their first and last times kept as they change: no walk of the fields per summary
        first_settled = span[0] - self._start if ok else None
        return MetricsSummary(
            first_value=None if self._first is None else self._first - self._start,
            all_settled=all_settled,
            never_true=self._counts[Verdict.NEVER_TRUE],
            provisional_changed=self._counts[Verdict.PROVISIONAL_CHANGED],
            displays=len(self._log),
            settled=len(ok),
            fields=len(self._required),
            final_known=final is not None,
            examples=tuple(self._examples),
            outcome=self._outcome,
            elapsed=None if self._end is None else self._end - self._start,
            started=self._started,
            byte_to_pixel=self.byte_to_pixel(),
            painted=len(self._latencies),
            unpainted=len(self._awaiting),
            first_settled=first_settled,
            facts=self.facts,
        )

    @property
    def facts(self) -> RunFacts:
        """This run's facts, with the tokens its wire reported so far."""
        usage = self.usage.usage
        if usage is None:
            return self._facts
        return replace(self._facts, tokens_in=usage.tokens_in, tokens_out=usage.tokens_out)

    def byte_to_pixel(self) -> tuple[float, float, float] | None:
        """(p50, p99, max) seconds from settling read to paint (None: nothing measured)."""
        if not self._latencies:
            return None
        if self._sorted is None:
            self._sorted = sorted(self._latencies)
        ordered = self._sorted
        return percentile(ordered, 50), percentile(ordered, 99), ordered[-1]

    @property
    def latency_log(self) -> tuple[tuple[str, float, float], ...]:
        """(pointer, settling read, paint) of each measured value, seconds after start."""
        return tuple(self._latency_log)

    @property
    def latencies(self) -> tuple[float, ...]:
        """Every byte-to-pixel latency measured this run, in paint order (seconds)."""
        return tuple(self._latencies)

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` after every change; returns a function that unsubscribes it."""
        return self._observers.subscribe(lambda _event: callback())

    # -- internals ------------------------------------------------------------------------------

    def _set_final(self, document: Any) -> None:
        if document is _NOTHING:
            self._final, self._required = None, {}
        else:
            self._final = dict(leaves(document))
            self._required = {p: v for p, v in self._final.items() if not _is_empty(v)}
        self._rejudge()

    def _reset(self) -> None:
        self._log: list[Display] = []
        self._last: dict[str, Display] = {}
        self._replaced: set[int] = set()  # log positions a later, different display replaced
        self._last_pos: dict[str, int] = {}
        self._first: float | None = None
        self._counts = {v: 0 for v in Verdict}
        self._examples: list[tuple[str, Any]] = []
        self._outcome: str | None = None
        self._end: float | None = None
        self._ok: dict[str, float] = {}  # required leaves whose latest display is their final value, unmarked
        self._ok_times: tuple[float, float] | None = None  # (min, max) of _ok's times; None: to be found again
        self._awaiting: dict[str, float] = {}
        self._settled_once: set[str] = set()
        self._latencies: list[float] = []
        self._latency_log: list[tuple[str, float, float]] = []
        self._sorted: list[float] | None = None
        self._facts = RunFacts()
        #: the tokens the run's provider reports (a tap on the lane's wire, one per run)
        self.usage = UsageTap()

    def _display_leaf(self, pointer: str, value: Any, provisional: bool, t: float) -> None:
        final = self._final_of(pointer)
        if value is None or (_is_blank(value) and not (final is not _NOTHING and _identical(final, value))):
            if pointer in self._last:  # the field was cleared: the next value is a new display
                self._last_pos.pop(pointer, None)
                del self._last[pointer]
                self._ok_pop(pointer)
            return
        last = self._last.get(pointer)
        if last is not None and last.provisional == provisional and _identical(last.value, value):
            return
        d = Display(pointer=pointer, value=value, provisional=provisional, t=t)
        if self._first is None:
            self._first = t
        pos = len(self._log)
        prev = self._last_pos.get(pointer)
        if prev is not None and self._final is None and not same_value(self._log[prev].value, value):
            # without the final value, a replaced value is judged against what replaced it (1200
            # then 1200.0 is the same value shown again, not a contradiction)
            self._count(prev, self._log[prev], +1, replaced=True)
        self._log.append(d)
        self._last[pointer] = d
        self._last_pos[pointer] = pos
        self._count(pos, d, +1)
        self._judge_settled(d)

    def _final_of(self, pointer: str) -> Any:
        if self._final is None:
            return _NOTHING
        return self._final.get(pointer, _NOTHING)

    def _judge(self, pos: int, d: Display) -> Verdict:
        if self._final is None:
            if pos not in self._replaced:
                return Verdict.UNKNOWN
            return Verdict.PROVISIONAL_CHANGED if d.provisional else Verdict.NEVER_TRUE
        final = self._final.get(d.pointer, _NOTHING)
        if final is not _NOTHING and same_value(d.value, final):
            return Verdict.TRUE
        return Verdict.PROVISIONAL_CHANGED if d.provisional else Verdict.NEVER_TRUE

    def _count(self, pos: int, d: Display, sign: int, *, replaced: bool = False) -> None:
        if replaced:
            old = self._judge(pos, d)
            self._counts[old] -= 1
            self._replaced.add(pos)
        verdict = self._judge(pos, d)
        self._counts[verdict] += sign
        if verdict is Verdict.NEVER_TRUE and len(self._examples) < _MAX_EXAMPLES:
            self._examples.append((d.pointer, d.value))

    def _rejudge(self) -> None:
        self._counts = {v: 0 for v in Verdict}
        self._examples = []
        for pos, d in enumerate(self._log):
            self._count(pos, d, +1)
        self._ok = {}
        self._ok_times = None
        for d in self._last.values():
            self._judge_settled(d)

    def _judge_settled(self, d: Display) -> None:
        """Keep `_ok` (pointer -> when it showed its final value unmarked) right for `d`, the
        field's latest display."""
        required = self._required
        if d.pointer not in required:
            return
        if not d.provisional and same_value(d.value, required[d.pointer]):
            self._ok_set(d.pointer, d.t)
        else:
            self._ok_pop(d.pointer)

    def _ok_set(self, pointer: str, t: float) -> None:
        old = self._ok.get(pointer)
        self._ok[pointer] = t
        span = self._ok_times
        if len(self._ok) == 1:
            self._ok_times = (t, t)
        elif span is not None:
            if old is not None and old in span:  # the first or last time replaced: found again when asked
                self._ok_times = None
            else:
                self._ok_times = (min(span[0], t), max(span[1], t))

    def _ok_pop(self, pointer: str) -> None:
        old = self._ok.pop(pointer, None)
        span = self._ok_times
        if old is not None and span is not None and old in span:
            self._ok_times = None

    def _ok_span(self) -> tuple[float, float]:
        """(first, last) time of the fields showing their final value unmarked ((0, 0): none); a
        walk over them only after the first or the last of them changed (rare while a run streams)."""
        if not self._ok:
            return 0.0, 0.0
        if self._ok_times is None:
            times = self._ok.values()
            self._ok_times = (min(times), max(times))
        return self._ok_times

    def _notify(self) -> None:
        self._observers.notify(None)
