"""Cut a scenario's output into token-like pieces, the way a model's tokenizer would.

How this works
--------------
`tokenize(text, seed)` first splits the text with a GPT-style pre-tokenizer pattern:

    letters with an optional leading space   ` Martinez`, `customer`, `東京`
    digits, in runs of at most three         `120` `0`   (the split point depends on the seed)
    punctuation runs with an optional space  `{"`, `": "`, `",`, `"}`, `\\"`
    whitespace runs                          `\n`, `  `

then, with a `random.Random(seed)`, cuts long letter runs into sub-word pieces of 2-6 characters
(BPE-like: `customer` -> `custom` + `er`) and glues neighbours together now and then, so that
pieces ignore JSON boundaries: a key's opening quote joins its first letters (`"customer_`) and
the rest of the key joins the punctuation after it (`name": "`). Pieces never split a code point;
escape sequences (`\\u00e4`, `\\"`) can be split like anything else, as real tokens split them.
`"".join(tokenize(text, seed)) == text` always holds, and the same (text, seed) always gives the
same pieces.

`coalesce(pieces, seed)` groups pieces into short chunks, as Anthropic's default (buffered)
tool streaming does; fine-grained streaming sends the raw pieces instead.

`malform(text, at)` breaks a JSON text just after character offset `at` (a comma outside any
string is dropped, or a stray quote is added before the last closing bracket), the way
fine-grained streaming can end invalid.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from livefill.demo.protocol import DEFAULT_SEED

__all__ = ["tokenize", "coalesce", "malform", "char_offset"]

_PRETOKEN = re.compile(
    r"""
      \ ?[^\W\d_]+          # letters (any script), optional leading space
    | \d+                   # digits (cut into groups of <= 3 below)
    | \ ?[^\w\s]+           # punctuation run, optional leading space
    | _+                    # underscores (joined to letters by the merge step)
    | \s+                   # whitespace run
    """,
    re.VERBOSE,
)


def _pretokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in _PRETOKEN.finditer(text):
        if m.start() != pos:  # cannot happen with the pattern above, but never lose text
            out.append(text[pos : m.start()])
        out.append(m.group())
        pos = m.end()
    if pos != len(text):
        out.append(text[pos:])
    return out


def _split_digits(run: str, rng: random.Random) -> list[str]:
    parts: list[str] = []
    i = 0
    while i < len(run):
        size = rng.randint(1, 3) if len(run) - i > 3 else (len(run) - i if rng.random() < 0.7 else rng.randint(1, len(run) - i))
        parts.append(run[i : i + size])
        i += size
    return parts


def _split_word(word: str, rng: random.Random) -> list[str]:
    # Long letter runs become sub-word pieces of 2-6 characters (CJK: 1-3).
    wide = any(ord(c) > 0x2E80 for c in word)
    lo, hi, limit = (1, 3, 3) if wide else (2, 6, 7)
    if len(word) <= limit:
        return [word]
    parts: list[str] = []
    i = 0
    while len(word) - i > limit:
        size = rng.randint(lo, hi)
        parts.append(word[i : i + size])
        i += size
    parts.append(word[i:])
    return parts


def tokenize(text: str, seed: int = DEFAULT_SEED) -> list[str]:
    """Cut `text` into token-like pieces, deterministically for `seed` (see the module comment)."""
    rng = random.Random(f"livefill-tokens:{seed}")
    pieces: list[str] = []
    for pre in _pretokens(text):
        if pre.isdigit():
            pieces.extend(_split_digits(pre, rng))
        elif pre.strip() and (pre[-1].isalpha()):
            pieces.extend(_split_word(pre, rng))
        else:
            pieces.append(pre)
    # Glue neighbours: underscores and quotes join words, punctuation joins what follows.
    merged: list[str] = []
    for piece in pieces:
        if merged:
            prev = merged[-1]
            glue = False
            if prev[-1:].isdigit() and piece[:1].isdigit():
                glue = False  # digit groups stay at most three long
            elif prev.endswith("_") or piece.startswith("_"):
                glue = rng.random() < 0.85
            elif prev.endswith('"') and piece[:1].isalpha() and len(prev) <= 2:
                glue = rng.random() < 0.6  # `{"` + `customer` -> `{"customer`
            elif not piece[:1].isspace() and not prev[-1:].isspace() and len(prev) + len(piece) <= 6:
                glue = rng.random() < 0.25
            if glue and len(prev) + len(piece) <= 12:
                merged[-1] = prev + piece
                continue
        merged.append(piece)
    assert "".join(merged) == text
    return merged


def coalesce(pieces: Sequence[str], seed: int = DEFAULT_SEED) -> list[list[str]]:
    """Group pieces into short chunks (Anthropic default-mode buffering), deterministically."""
    rng = random.Random(f"livefill-chunks:{seed}")
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    target = rng.randint(8, 24)
    for piece in pieces:
        current.append(piece)
        size += len(piece)
        if size >= target:
            chunks.append(current)
            current, size, target = [], 0, rng.randint(8, 24)
    if current:
        chunks.append(current)
    return chunks


def char_offset(pieces: Sequence[str], count: int) -> int:
    """Character offset in the joined text where piece number `count` starts."""
    return sum(len(p) for p in pieces[:count])


def _structural_commas(text: str) -> list[int]:
    commas: list[int] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ",":
            commas.append(i)
    return commas


def malform(text: str, at: int) -> str:
    """`text` (one JSON document) made syntactically invalid at or after character offset `at`."""
    for i in _structural_commas(text):
        if i >= at:
            return text[:i] + text[i + 1 :]  # a missing comma: `"EUR" "issue_date"`
    end = text.rstrip()
    last = len(end) - 1  # the final closing bracket
    return text[:last] + '"' + text[last:]  # a stray quote: `{"city":"Lisbon""}`
