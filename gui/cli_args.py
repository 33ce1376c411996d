"""Command-line value checks shared by `livefill` and `livefill animate` (argparse `type=`
converters: a bad value is one `error:` line and exit 2, before anything starts)."""

from __future__ import annotations

import argparse


def compare_modes(text: str) -> list[str]:
    """`naive,partial,settled` -> the lanes' mode values (2 to 5 of them)."""
    from core.session import parse_modes

    try:
        return [m.value for m in parse_modes(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def frame_rate(text: str) -> float:
    """Frames per second of an animation: above 0, at most 50."""
    try:
        fps = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < fps <= 50:
        raise argparse.ArgumentTypeError("give a number above 0 and at most 50")
    return fps


def frame_width(text: str) -> int:
    """Width of an animation in pixels: 200 to 3840."""
    try:
        width = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 200 <= width <= 3840:
        raise argparse.ArgumentTypeError("give 200 to 3840 pixels")
    return width
