"""JSON Pointers (RFC 6901): the one place that escapes, joins and parses them.

A pointer is "" (the whole document) or a sequence of "/"-prefixed reference tokens in which
"~" is written "~0" and "/" is written "~1". Array indices are plain decimal tokens.
`parse` remembers the pointers it parsed last (a bounded cache: a run applies the same pointers
again and again), and hands each caller a fresh list.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

__all__ = ["escape", "unescape", "join", "child", "parse", "parse_strict", "parent", "is_index"]


def escape(token: str | int) -> str:
    """One reference token, escaped: `~` -> `~0`, `/` -> `~1`."""
    token = str(token)
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape(token: str) -> str:
    """One escaped reference token, decoded (`~1` -> `/`, then `~0` -> `~`)."""
    if "~" in token:
        return token.replace("~1", "/").replace("~0", "~")
    return token


def join(tokens: Iterable[str | int]) -> str:
    """Unescaped tokens -> a pointer ("" for no tokens)."""
    return "".join("/" + escape(t) for t in tokens)


def child(pointer: str, token: str | int) -> str:
    """The pointer of `token` inside the value at `pointer`."""
    return pointer + "/" + escape(token)


#: How many parsed pointers `parse` keeps (a catalog run has about 1,500 distinct ones).
PARSE_CACHE_SIZE = 8192


def parse(pointer: str) -> list[str]:
    """A pointer -> its unescaped tokens. ValueError when it is neither "" nor starts with "/"."""
    return list(_parsed(pointer))


@lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parsed(pointer: str) -> tuple[str, ...]:
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return tuple([unescape(t) for t in pointer[1:].split("/")])


def parse_strict(pointer: str) -> list[str] | None:
    """Like `parse`, but None for anything RFC 6901 does not allow (a "~" not followed by 0 or 1)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/")
    for t in tokens:
        i = t.find("~")
        while i != -1:
            if i + 1 >= len(t) or t[i + 1] not in "01":
                return None
            i = t.find("~", i + 2)
    return [unescape(t) for t in tokens]


def parent(pointer: str) -> str:
    """The pointer of the container that holds `pointer` ("" for a top-level value)."""
    return pointer[: pointer.rfind("/")] if pointer else ""


def is_index(token: str) -> bool:
    """True for an array index token: "0" or digits without a leading zero."""
    return token.isdigit() and token.isascii() and (token == "0" or token[0] != "0")
