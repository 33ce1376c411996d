"""One `livefill compare` lane's figures once it ended: `LaneResult` (the `--json` object).

From the lane's `LaneMetrics` (first value, all settled, values shown that were never true:
judged against the lane's own final values), its run's status (deltas, relay records, bytes on the
wire), the `UsageTap` on its wire (tokens, where the provider reports them: livefill.wire.usage)
and the scoring of its committed object against the expected answer (livefill.session.scoring).
"first settled" is the lane's `MetricsSummary.first_settled`: the first value it showed unmarked
that is its final value (its committed object's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from livefill.cli.compare_plan import ComparePlan
from livefill.extraction.json_doc import MISSING
from livefill.session.lane import SessionLane
from livefill.session.metrics import leaves
from livefill.session.run_status import Phase
from livefill.session.scoring import score
from livefill.wire.usage import UsageTap

__all__ = ["LaneResult", "lane_result"]


@dataclass(frozen=True, kw_only=True, slots=True)
class LaneResult:
    """One lane's figures (the `--json` object, key for key: `as_json`)."""

    lane: int
    provider: str
    live: bool
    model: str | None
    mode: str
    structured: str
    fine_grained: bool
    outcome: str  # "committed", or the failure's code ("cancelled", "disconnected", ...; else "stopped" / "failed")
    reason: str
    first_value_s: float | None
    first_settled_s: float | None
    all_settled_s: float | None
    elapsed_s: float | None
    deltas: int
    records: int
    bytes: int
    never_true: int
    fields_total: int | None
    fields_right: int | None
    wrong_fields: tuple[str, ...] | None
    tokens_in: int | None
    tokens_out: int | None

    @property
    def committed(self) -> bool:
        return self.outcome == "committed"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__slots__:  # type: ignore[attr-defined]
            value = getattr(self, name)
            if isinstance(value, float):
                value = round(value, 4)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def lane_result(
    index: int, lane: SessionLane, tap: UsageTap, plan: ComparePlan, error: str | None
) -> LaneResult:
    """The figures of lane `index` once it ended."""
    s = plan.settings[index]
    status = lane.status
    run = lane.run
    summary = lane.metrics.summary()
    committed = status is not None and status.phase is Phase.COMMITTED and run is not None
    result = run.result if committed and run is not None else MISSING
    if committed:
        outcome, reason = "committed", status.reason if status is not None else ""
    elif status is not None and status.phase.final:
        outcome = status.error_code or status.phase.value
        reason = status.reason
    else:
        outcome, reason = "failed", error or "the run did not start"
    if plan.expected is not None:
        scored = score(plan.expected, result if result is not MISSING else None)
        fields_total: int | None = scored.total
        fields_right: int | None = scored.right
        wrong: tuple[str, ...] | None = scored.wrong
    else:
        fields_total = len(list(leaves(result))) if result is not MISSING else None
        fields_right, wrong = None, None
    usage = tap.usage
    config = run.config if run is not None else None
    return LaneResult(
        lane=index,
        provider=s.provider,
        live=s.live,
        model=(config.model if config is not None else None) or None,
        mode=s.mode.value,
        structured=config.structured if config is not None else s.structured,
        fine_grained=bool(config.fine_grained) if config is not None else s.fine_grained,
        outcome=outcome,
        reason=reason,
        first_value_s=summary.first_value,
        first_settled_s=summary.first_settled if committed else None,  # judged against the committed object
        all_settled_s=summary.all_settled if committed else None,
        elapsed_s=status.elapsed if status is not None else None,
        deltas=status.deltas_received if status is not None else 0,
        records=status.records_received if status is not None else 0,
        bytes=status.bytes_received if status is not None else 0,
        never_true=summary.never_true,
        fields_total=fields_total,
        fields_right=fields_right,
        wrong_fields=wrong,
        tokens_in=usage.tokens_in if usage is not None else None,
        tokens_out=usage.tokens_out if usage is not None else None,
    )
