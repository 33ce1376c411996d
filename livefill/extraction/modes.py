"""The modes a stream can be read in, and the one table that says what each mode means.

Nothing outside this table asks "is this naive?": code that needs to know whether a mode reads
the relay, marks field states or restores the form on failure reads the mode's `ModeSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Mode", "ModeSpec", "MODES", "parse_mode"]


class Mode(Enum):
    PARTIAL = "partial"  # incremental prefix parser in the client: provisional values, then settled
    SETTLED = "settled"  # through the relay: only settled, checked values
    HYBRID = "hybrid"  # through the relay: prose grows provisionally, the rest appears settled
    BLOCKING = "blocking"  # nothing until the tool block ends, then everything at once
    NAIVE = "naive"  # repair-parse and trust the growing buffer: wrong on purpose, never restores

    @property
    def spec(self) -> ModeSpec:
        """This mode's row of the table."""
        return MODES[self]

    @property
    def needs_relay(self) -> bool:
        """True for the modes that read the relay instead of the provider."""
        return MODES[self].needs_relay

    @property
    def label(self) -> str:
        """What the UI calls this mode."""
        return MODES[self].label


@dataclass(frozen=True, slots=True)
class ModeSpec:
    """What one mode means, for every part of the app that has to know."""

    mode: Mode
    label: str  # what a person sees in a menu or a lane header
    description: str  # one sentence for a tooltip or --help
    needs_relay: bool  # reads the relay's settled records instead of the provider's wire
    marks_states: bool  # fields show provisional/settled marks (False: values with no state)
    restores_on_failure: bool  # a run that does not commit gives back the form as it was
    prose_as_deltas: bool = False  # relay mode that sends prose fields as growing deltas


MODES: dict[Mode, ModeSpec] = {
    Mode.PARTIAL: ModeSpec(
        Mode.PARTIAL,
        "partial",
        "Values appear as they are written, marked provisional until their last byte arrives.",
        needs_relay=False,
        marks_states=True,
        restores_on_failure=True,
    ),
    Mode.SETTLED: ModeSpec(
        Mode.SETTLED,
        "settled (relay)",
        "A relay sends each value only once it has settled and passed its field's check.",
        needs_relay=True,
        marks_states=True,
        restores_on_failure=True,
    ),
    Mode.HYBRID: ModeSpec(
        Mode.HYBRID,
        "hybrid (relay)",
        "Through the relay: prose grows as it is written, every other value appears settled.",
        needs_relay=True,
        marks_states=True,
        restores_on_failure=True,
        prose_as_deltas=True,
    ),
    Mode.BLOCKING: ModeSpec(
        Mode.BLOCKING,
        "blocking",
        "Nothing is shown until the model has finished; then everything at once.",
        needs_relay=False,
        marks_states=True,
        restores_on_failure=True,
    ),
    Mode.NAIVE: ModeSpec(
        Mode.NAIVE,
        "naive — incorrect on purpose",
        "Repairs and trusts every prefix: shows unfinished values as if true and keeps them.",
        needs_relay=False,
        marks_states=False,
        restores_on_failure=False,
    ),
}


def parse_mode(mode: Mode | str) -> Mode:
    """A Mode from itself or its value; ValueError naming the known modes otherwise."""
    if isinstance(mode, Mode):
        return mode
    try:
        return Mode(mode)
    except ValueError:
        known = ", ".join(m.value for m in Mode)
        raise ValueError(f"unknown mode {mode!r} (known: {known})") from None
