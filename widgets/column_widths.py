"""How wide each column of a field table is: by what it holds, not an equal share.

A column of short codes ("DSK-140") needs a few characters; a description needs all the room
there is. `Column` says what one column needs: `natural`, the width of its widest value (or of
its title's longest word, whichever is wider), `floor`, the least it may get, and whether it holds
text (only text columns give or take room) and long text (it takes what is left over).

`fit_columns(columns, available)` shares `available` pixels out:
- a column that is not text (numbers, dates, yes/no, choices) gets its natural width (a title
  on one line), or its floor (the title wrapped at words) when the text columns would not fit;
- when the text columns' natural widths fit in what is left, each gets its natural width and the
  rest goes to the long ones (to every text column when none is long), so the table fills its width;
- when they do not fit, the short text keeps its natural width and the long text shares what is
  left equally (each still at least its floor; it elides, whole in a tooltip); under the floors
  the table scrolls sideways.
The widths always add up to `available` exactly when they fit, so no sideways scroll bar appears.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Column", "fit_columns"]


@dataclass(frozen=True, slots=True)
class Column:
    """What one column needs, in pixels (see the module docstring)."""

    natural: int
    floor: int
    text: bool = False
    long: bool = False


def fit_columns(columns: list[Column], available: int) -> list[int]:
    """The width of each column in `available` pixels (see the module docstring)."""
    widths = [max(c.natural, c.floor) for c in columns]  # (a column that is not text: floor <= natural)
    text = [i for i, c in enumerate(columns) if c.text]
    if not text:
        return widths
    left = available - sum(w for i, w in enumerate(widths) if i not in text)
    wanted = sum(widths[i] for i in text)
    if wanted > left:  # the other columns' titles wrap first
        for i, c in enumerate(columns):
            if not c.text:
                left += widths[i] - c.floor
                widths[i] = c.floor
    if wanted <= left:
        takers = [i for i in text if columns[i].long] or text
        extra = left - wanted
        for n, i in enumerate(takers):
            widths[i] += extra // len(takers) + (1 if n < extra % len(takers) else 0)
        return widths
    # too little room: short text (codes) whole, the long text sharing the rest (at least its floor:
    # under that the table scrolls sideways); with no long text, the widest share what is left
    long = [i for i in text if columns[i].long]
    short = [i for i in text if not columns[i].long]
    if long and short:
        _share(widths, columns, long, left - sum(widths[i] for i in short))
    else:
        _share(widths, columns, text, left)
    return widths


def _share(widths: list[int], columns: list[Column], among: list[int], room: int) -> None:
    """Water filling: the narrowest of `among` keep their widths while they are under an equal
    share of `room`; the others get that share (at least their floor)."""
    order = sorted(among, key=lambda i: widths[i])
    for n, i in enumerate(order):
        share = room // (len(order) - n)
        if widths[i] <= share:
            room -= widths[i]
            continue
        rest = order[n:]
        for m, j in enumerate(rest):
            widths[j] = max(columns[j].floor, room // len(rest) + (1 if m < room % len(rest) else 0))
        return
