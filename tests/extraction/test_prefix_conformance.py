"""JSONTestSuite (test_parsing) through the prefix parser, fed whole, one character at a time and
in seeded random cuts. y_ files must parse to json.loads' value, n_ files must be rejected with
JSONPrefixError (from feed, or IncompleteJSON from close), i_ files may go either way but must
agree with json.loads whenever both accept. A file that is not UTF-8 counts as rejected at
decoding (we decode as UTF-8 first, as the product does)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from livefill.extraction.prefix import IncompleteJSON, JSONPrefixError, PrefixParser
from tests.conftest import SHARED
from tests.extraction.test_prefix_support import cut, feed_checked, same

CORPUS = SHARED / "conformance/JSONTestSuite/test_parsing"
FILES = sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []
# The two huge n_structure files (100,000 / 250,001 characters of unclosed brackets) have a test
# of their own below: fed whole, one character at a time (that is the point of them: O(1) work
# and memory per bracket) and in 500 random cuts, without the per-call checks of the others.
HUGE = {"n_structure_100000_opening_arrays.json", "n_structure_open_array_object.json"}
SEEDS = range(4)

# A user's clone has no shared/ beside it: there the corpus tests skip with one reason. In CI
# (CI set, the corpus laid beside the clone) they run, and a missing corpus fails.
pytestmark = pytest.mark.skipif(
    not FILES and not os.environ.get("CI"),
    reason=f"JSONTestSuite corpus not found at {CORPUS} (it is github.com/nst/JSONTestSuite, "
    "test_parsing/, MIT; CI lays it beside the clone)",
)


def test_corpus_is_present() -> None:
    assert len(FILES) >= 300, f"JSONTestSuite not found at {CORPUS}"


def _decode(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None


def _cuttings(text: str, name: str) -> dict[str, list[str]]:
    rnd = random.Random(name)
    out = {"whole": [text], "chars": list(text)}
    for seed in SEEDS:
        k = rnd.randint(1, max(1, min(len(text) - 1, 12)))
        points = rnd.sample(range(1, len(text)), k) if len(text) > 1 else []
        out[f"random{seed}"] = cut(text, points)
    return out


def _outcome(pieces: list[str]) -> tuple[str, object]:
    parser = PrefixParser()
    try:
        for piece in pieces:
            parser.feed(piece)
        parser.close()
    except IncompleteJSON as e:
        return "incomplete", e.offset
    except JSONPrefixError as e:
        return "error", e.offset
    return "ok", parser.value()


def _by_prefix(prefix: str) -> list[Path]:
    return [p for p in FILES if p.name.startswith(prefix)]


@pytest.mark.parametrize("path", _by_prefix("y_"), ids=lambda p: p.name)
def test_y_files_are_accepted_with_json_loads_value(path: Path) -> None:
    text = _decode(path)
    assert text is not None, "a y_ file must be UTF-8"
    expected = json.loads(text)
    for how, pieces in _cuttings(text, path.name).items():
        value, _ = feed_checked(text, pieces)
        assert same(value, expected), how


@pytest.mark.parametrize("path", [p for p in _by_prefix("n_") if p.name not in HUGE], ids=lambda p: p.name)
def test_n_files_are_rejected(path: Path) -> None:
    text = _decode(path)
    if text is None:
        return  # rejected at decoding
    outcomes = {}
    for how, pieces in _cuttings(text, path.name).items():
        kind, offset = _outcome(pieces)
        assert kind in ("error", "incomplete"), f"{how}: accepted {offset!r}"
        outcomes[how] = (kind, offset)
    # the same error at the same offset however the text was cut
    assert len(set(outcomes.values())) == 1, outcomes
    kind, offset = outcomes["whole"]
    if kind == "incomplete":
        assert offset == len(text)
    else:
        # the offset names the first impossible character: everything before it is a viable prefix
        assert 0 <= offset < len(text)
        PrefixParser().feed(text[:offset])
        with pytest.raises(JSONPrefixError) as info:
            PrefixParser().feed(text[: offset + 1])
        assert info.value.offset == offset


@pytest.mark.parametrize("path", _by_prefix("i_"), ids=lambda p: p.name)
def test_i_files_agree_with_json_loads_when_both_accept(path: Path) -> None:
    text = _decode(path)
    if text is None:
        return
    try:
        expected = json.loads(text)
        accepted = True
    except ValueError:
        accepted = False
    outcomes = set()
    for how, pieces in _cuttings(text, path.name).items():
        kind, result = _outcome(pieces)  # only JSONPrefixError may escape _outcome's catch
        if kind == "ok" and accepted:
            assert same(result, expected), how
        outcomes.add(kind if kind != "ok" else "ok")
    assert len(outcomes) == 1, f"the outcome depends on the cutting: {outcomes}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HUGE))
def test_huge_unclosed_nesting_is_incomplete_under_every_cutting(name: str) -> None:
    text = _decode(CORPUS / name)
    assert text is not None
    for pieces in ([text], list(text), cut(text, random.Random(name).sample(range(1, len(text)), 500))):
        parser = PrefixParser()
        for piece in pieces:
            parser.feed(piece)
        with pytest.raises(IncompleteJSON) as info:
            parser.close()
        assert info.value.offset == len(text)
        pointers = info.value.pointers
        assert pointers[0] == "" and len(pointers) > 100_000 - 10
        assert pointers[1] == "/0"
