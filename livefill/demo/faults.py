"""From a scenario, the knobs and a wire to the exact sequence of steps a response is made of.

How this works
--------------
`make_plan` decides what text the "model" writes (the scenario's output, or the invalid-value or
malformed variant), cuts it into pieces for the seed, and, for a fault that interrupts the
stream, how many pieces go out before it (`cut`, the fault's fraction of the pieces).
`program(plan, stream)` then lays the wire's frames out as `Step`s:

    preamble frames                                    Write ...
    the pieces before the cut (or all of them)         Tokens ...
    then, by fault:
      none / invalid_value / malformed                 Write(finish COMPLETE)
      max_tokens                                       Write(finish LENGTH)
      error                                            Write(error frame)          (body ends)
      disconnect                                       Abort(first half of the next frame)
      stall / stall_silent                             Stall(pings=True / False)
      blank_line                                       Write(b"\\n"), the other Tokens, finish

The HTTP faults (`livefill.demo.protocol.HTTP_FAULTS`: http_400 ... overloaded) never reach a plan:
the demo provider answers them with the wire's `refusal` (an error status and body) instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from livefill.demo.protocol import Fault, FaultName, fault_refusal
from livefill.extraction.scenarios import Scenario
from livefill.demo.generation import char_offset, malform, tokenize
from livefill.demo.knobs import Knobs
from livefill.demo.wires import Abort, BadRequest, Stall, Step, StopKind, WireSpec, WireStream, Write

__all__ = ["Plan", "make_plan", "program", "check_fault", "CUTTING"]

#: Faults that interrupt the stream after `cut` pieces.
CUTTING = frozenset(
    {
        FaultName.MAX_TOKENS,
        FaultName.ERROR,
        FaultName.DISCONNECT,
        FaultName.STALL,
        FaultName.STALL_SILENT,
        FaultName.BLANK_LINE,
    }
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """What one response writes: `pieces` of `text`, and where a fault cuts in."""

    text: str
    pieces: tuple[str, ...]
    fault: Fault | None = None
    cut: int | None = None  # pieces written before a cutting fault

    @property
    def tokens_total(self) -> int:
        return len(self.pieces)

    @property
    def head(self) -> tuple[str, ...]:
        """The pieces written before the fault (all of them without a cutting fault)."""
        return self.pieces if self.cut is None else self.pieces[: self.cut]


def _cut(fraction: float, n: int) -> int:
    return max(0, min(n, round(fraction * n)))


def make_plan(scenario: Scenario, knobs: Knobs) -> Plan:
    """The output text, its pieces for `knobs.seed`, and the cut of `knobs.fault`."""
    fault = knobs.fault
    text = scenario.output_text
    if fault is not None and fault.name is FaultName.INVALID_VALUE:
        text = scenario.invalid_output_text
    pieces = tokenize(text, knobs.seed)
    if fault is not None and fault.name is FaultName.MALFORMED:
        at = char_offset(pieces, _cut(fault.fraction, len(pieces)))
        text = malform(text, at)
        pieces = tokenize(text, knobs.seed)
    cut = _cut(fault.fraction, len(pieces)) if fault is not None and fault.name in CUTTING else None
    return Plan(text=text, pieces=tuple(pieces), fault=fault, cut=cut)


def check_fault(fault: Fault | None, wire: WireSpec, *, stream: bool) -> None:
    """Refuse (BadRequest) a fault the wire cannot express (`livefill.demo.protocol.FAULT_SCOPES`)."""
    if fault is None:
        return
    why = fault_refusal(fault.name, wire.name, stream=stream)
    if why is not None:
        raise BadRequest(f"x-demo-fault: {why}")


def _half(data: bytes) -> bytes:
    return data[: max(1, len(data) // 2)] if len(data) > 1 else data


def program(plan: Plan, stream: WireStream) -> Iterator[Step]:
    """The steps of one streamed response (see the module comment). A generator: frames are built
    when the engine reaches them, so timestamps inside frames are the times they are written."""
    for frame in stream.preamble():
        yield Write(data=frame)
    yield from stream.token_frames(plan.head)
    fault = plan.fault.name if plan.fault is not None else None
    if plan.cut is None:
        yield from (Write(data=f) for f in stream.finish(StopKind.COMPLETE, plan.text, plan.tokens_total))
        return
    emitted = "".join(plan.head)
    if fault is FaultName.MAX_TOKENS:
        yield from (Write(data=f) for f in stream.finish(StopKind.LENGTH, emitted, plan.cut))
    elif fault is FaultName.ERROR:
        yield Write(data=stream.error_frame())
    elif fault is FaultName.DISCONNECT:
        following = [t.data for t in stream.token_frames(plan.pieces[plan.cut :]) if t.data]
        following += stream.finish(StopKind.COMPLETE, plan.text, plan.tokens_total)
        yield Abort(data=_half(following[0]) if following else b"")
    elif fault is FaultName.STALL:
        yield Stall(pings=True)
    elif fault is FaultName.STALL_SILENT:
        yield Stall(pings=False)
    elif fault is FaultName.BLANK_LINE:
        yield Write(data=b"\n")
        yield from stream.token_frames(plan.pieces[plan.cut :])
        yield from (Write(data=f) for f in stream.finish(StopKind.COMPLETE, plan.text, plan.tokens_total))
    else:  # pragma: no cover - CUTTING lists exactly the faults above
        raise AssertionError(fault)
