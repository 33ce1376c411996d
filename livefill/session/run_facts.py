"""What a lane's run brought beside its values: wire counts, tokens, score and cost (`RunFacts`).

The scoreboard (livefill.session.scoreboard) fills these in as the run goes: the deltas, relay
records and bytes its status counts, the model it asked for and that model's price (the person's
own: livefill.session.prices), and at commit how many of the expected answer's fields it got
right. The tokens come from the `UsageTap` on the lane's wire (livefill.wire.usage), where the
provider reports them. `LaneMetrics` keeps one `RunFacts` per run and hands it out with its
summary (`MetricsSummary.facts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from livefill.session.prices import Price
from livefill.session.prices import cost as cost_of

__all__ = ["RunFacts"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RunFacts:
    """One run's figures besides its values (None: not known, or not reported).

    `fields_right` / `fields_total`: the expected answer's fields the committed object has right,
    out of all of them (None: no expected answer, or the run did not commit); `wrong`: the pointers
    of the others. `answer_source`: where the expected answer came from ("" : there is none).
    """

    deltas: int = 0
    records: int = 0
    bytes: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str | None = None
    price: Price | None = None
    fields_right: int | None = None
    fields_total: int | None = None
    wrong: tuple[str, ...] = ()
    answer_source: str = ""

    @property
    def cost(self) -> float | None:
        """tokens × the model's price (None unless both counts and a price are known)."""
        return cost_of(self.price, self.tokens_in, self.tokens_out)
