"""Command-line value checks shared by `livefill` and `livefill animate` (argparse `type=`
converters: a bad value is one `error:` line and exit 2, before anything starts). The generic
ones (numbers in a range, files) are `livefill.cli.arg_types`, shared with `livefill extract` and
`livefill-server`."""

from __future__ import annotations

import argparse

from livefill.cli.arg_types import existing_file, number, output_file, whole_number
from livefill.errors import InputError
from livefill.wire.keys import base_url_example, normalize_base_url

__all__ = [
    "COMPARE_PRESETS",
    "compare_lane",
    "compare_modes",
    "compare_preset",
    "demo_fault",
    "demo_slicing",
    "existing_file",
    "expected_answer",
    "fault_wire_problem",
    "frame_rate",
    "frame_width",
    "number",
    "output_file",
    "picture_file",
    "whole_number",
]

PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
"""What `--screenshot` can write (Qt picks the format by the name's ending)."""


def compare_modes(text: str) -> list[str]:
    """`naive,partial,settled` -> the lanes' mode values (2 to 5 of them)."""
    from livefill.session.compare import parse_modes  # lazy: pydantic and the form model, only with --compare (370 ms)

    try:
        return [m.value for m in parse_modes(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


COMPARE_PRESETS = ("modes", "wires")
"""The compare presets `--compare-preset` offers (livefill.session.lane_settings.PRESETS; the live
one needs the keys, so it is the window's only)."""


def compare_preset(text: str) -> list[str]:
    """`wires` -> the `--lane` texts of that preset's lanes ("provider=anthropic,live=false,...")."""
    name = text.strip().lower()
    if name not in COMPARE_PRESETS:
        raise argparse.ArgumentTypeError(f"unknown preset {text!r}; known: {', '.join(COMPARE_PRESETS)}")
    from livefill.session.lane_settings import PRESETS  # lazy: the session's settings, only with --compare-preset (740 ms)

    return [lane.text() for lane in PRESETS[name].lanes]


def compare_lane(text: str) -> str:
    """`provider=openai-chat,base_url=URL,model=M`: one compare lane's `--lane` text, checked as
    `livefill compare --lane` checks it (livefill.session.lane_settings), its base URL in one
    spelling; a lane without `provider` reads the session's."""
    from livefill.session.lane_settings import LANE_KEYS, LaneSettingsError, parse_lane_settings  # lazy: as --compare-preset (740 ms)

    try:
        lane = parse_lane_settings(text)
    except LaneSettingsError as exc:
        message = " ".join(str(exc).split())
        if message.partition("=")[0] in LANE_KEYS and "=" in message.partition(":")[0]:
            raise argparse.ArgumentTypeError(message) from None  # "provider=nope: unknown provider; ..."
        raise argparse.ArgumentTypeError(f"{text}: {message}") from None
    if lane.base_url is not None:
        try:
            lane = lane.with_(base_url=normalize_base_url(lane.base_url, example=base_url_example(lane.provider)))
        except InputError as exc:
            raise argparse.ArgumentTypeError(f"base_url={lane.base_url}: {' '.join(str(exc).split())}") from None
    return lane.text()


def expected_answer(text: str) -> str:
    """`FILE.json`: an expected answer the window can score against (checked as File ▸ Expected answer checks it)."""
    from livefill.session.scoring import load_expected  # lazy: the session's scoring, only with --expected (23 ms)

    try:
        load_expected(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(" ".join(str(exc).split())) from None
    return text


def demo_fault(text: str) -> str | None:
    """`NAME[@FRACTION]`, checked as the demo provider checks it ("none": no fault)."""
    from livefill.session.settings import check_fault  # lazy: the demo protocol, only with --fault (~100 ms for `livefill animate`)

    try:
        return check_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def demo_slicing(text: str) -> str:
    """`event | N | coalesce:MS`."""
    from livefill.session.settings import check_slicing  # lazy: the demo protocol, only with --slice (~100 ms for `livefill animate`)

    try:
        return check_slicing(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fault_wire_problem(fault: str | None, provider: str | None, providers: tuple[str, ...]) -> str | None:
    """Why `--fault` cannot go with `--provider` (None: it can). Without a provider, a fault that
    applies to only some of `providers` asks for one of them to be named."""
    if fault is None:
        return None
    from livefill.session.settings import fault_problem  # lazy: the demo protocol, only with --fault (~100 ms for `livefill animate`)

    if provider is not None:
        why = fault_problem(fault, provider)
        return f"--fault {fault} with --provider {provider}: {why}" if why else None
    fits = [p for p in providers if fault_problem(fault, p) is None]
    if len(fits) == len(providers):
        return None
    if not fits:
        return f"--fault {fault}: {fault_problem(fault, providers[0])}"
    return f"--fault {fault}: {fault_problem(fault, next(p for p in providers if p not in fits))}; add --provider {' or --provider '.join(fits)}"


picture_file = output_file(PICTURE_SUFFIXES)
"""`--screenshot PATH`: a .png (or .jpg, .bmp) that can be written."""

frame_rate = number(0, 50, low_open=True, what="frames per second")
"""Frames per second of an animation: above 0, at most 50."""

frame_width = whole_number(200, 3840, what="pixels")
"""Width of an animation in pixels: 200 to 3840."""
