"""The one 255-colour palette of an animated GIF of the window, keeping its colour coding.

    palette = shared_palette(pictures)      # a PIL "P" image; picture.quantize(palette=palette)

How this works
--------------
A window picture is mostly greys (backgrounds, text, borders); the colours that carry meaning (the
green ✓ of a settled value, the amber "… still arriving", the legend's markers, the lanes' colours)
are a few hundred pixels of thin glyphs. A median cut over the pictures splits by population, so
it spends its 255 colours on shades of grey and merges those few green and amber pixels into a
grey one: the GIF lost its colour coding. Here the palette is made of two parts:

- key colours (up to `KEY_COLOURS`): the exact colours the pictures use most, counted over a few
  pictures spread over the run at full size, with up to half the slots kept for vivid colours
  (chroma >= `VIVID`: a colour, not a grey) so a glyph's green stays that green;
- the rest: a median cut of the same pictures (halved) for the in-between shades of antialiasing.

Mapping a picture to it without dithering keeps unchanged pixels on the same index (frame
differencing stays small). Pillow is imported lazily: the app imports the recording package at
start, and only `livefill animate` draws.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["KEY_COLOURS", "VIVID", "chroma", "shared_palette"]

KEY_COLOURS = 128
"""Palette slots kept for the pictures' exact most used colours (of 255)."""

VIVID = 40
"""max(R, G, B) - min(R, G, B) from which a colour counts as a colour (the ✓ green is 79, amber 208)."""

MIN_VIVID_PIXELS = 4
"""A vivid colour used by fewer pixels (over the samples) is a stray antialiasing shade."""


def chroma(colour: tuple[int, int, int]) -> int:
    return max(colour) - min(colour)


def key_colours(pictures: Sequence[Any], limit: int = KEY_COLOURS) -> list[tuple[int, int, int]]:
    """The exact colours to keep: vivid ones first (up to half of `limit`), then the most used."""
    counts: Counter[tuple[int, int, int]] = Counter()
    for picture in pictures:
        for n, colour in picture.getcolors(picture.width * picture.height):
            counts[colour] += n
    ranked = [colour for colour, _n in counts.most_common()]
    vivid = [c for c in ranked if chroma(c) >= VIVID and counts[c] >= MIN_VIVID_PIXELS][: limit // 2]
    chosen = set(vivid)
    common = [c for c in ranked if c not in chosen][: limit - len(vivid)]
    return vivid + common


def shared_palette(pictures: Sequence[Any], samples: int = 8, *, image: Callable[[Any], Any] = lambda p: p) -> Any:
    """One 255-colour palette image ("P") for `pictures`, from up to `samples` of them spread over
    the run (see the module docstring); `image(item)` is an item's PIL image (items may be packed)."""
    from PIL import Image  # lazy: only `livefill animate` draws; the app imports this at start (14-67 ms)

    if not pictures:
        raise ValueError("no pictures")
    n = len(pictures)
    k = min(samples, n)
    chosen = sorted({round(i * (n - 1) / max(1, k - 1)) for i in range(k)})
    sampled = [image(pictures[i]).convert("RGB") for i in chosen]
    keys = key_colours(sampled)
    thumbs = [p.reduce(2) if min(p.size) >= 2 else p for p in sampled]
    sheet = Image.new("RGB", (max(t.width for t in thumbs), sum(t.height for t in thumbs)), "white")
    y = 0
    for t in thumbs:
        sheet.paste(t, (0, y))
        y += t.height
    rest_count = max(1, 255 - len(keys))
    cut = sheet.quantize(colors=rest_count, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat = cut.getpalette() or []
    rest = [tuple(flat[i : i + 3]) for i in range(0, min(len(flat), 3 * rest_count), 3)]
    colours: list[tuple[int, int, int]] = list(keys)
    seen = set(colours)
    for colour in rest:
        if colour not in seen and len(colours) < 255:
            seen.add(colour)
            colours.append(colour)  # type: ignore[arg-type]
    palette = Image.new("P", (1, 1))
    padding = [colours[0]] * (256 - len(colours))  # unused slots repeat a used colour, never add black
    palette.putpalette([v for colour in colours + padding for v in colour])
    return palette
