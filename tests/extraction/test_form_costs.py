"""What applying a run's changes costs the form, counted (not timed): a pointer applied again and
again is parsed once (`pointer.parse` keeps what it parsed), not on every change."""

from __future__ import annotations

import sys

import pytest

from livefill.extraction import pointer as jp
from livefill.extraction.form import FieldState, FormModel, Origin
from livefill.extraction.json_doc import walk
from livefill.extraction.readers import PartialReader, ReaderOptions
from livefill.extraction.scenarios import load_scenarios
from livefill.extraction.schemas import schema_model
from livefill.wire.events import ArgsDelta


@pytest.fixture
def unescapes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every token `pointer.parse` decodes (it decodes each token of a pointer it parses)."""
    seen: list[str] = []
    real = jp.unescape

    def counting(token: str) -> str:
        seen.append(token)
        return real(token)

    jp._parsed.cache_clear()
    monkeypatch.setattr(jp, "unescape", counting)
    yield seen
    jp._parsed.cache_clear()


def _catalog_batches() -> tuple[type, list[list[tuple]]]:
    scenario = load_scenarios()["catalog"]
    model = schema_model(scenario.schema_name)
    reader = PartialReader(ReaderOptions(), model)
    text = scenario.output_text
    batches = [reader.feed(ArgsDelta(text=text[i:i + 64])) for i in range(0, len(text), 64)]
    return model, [b for b in batches if b]


def test_a_pointer_applied_again_and_again_is_parsed_once(unescapes: list[str]) -> None:
    model, batches = _catalog_batches()
    jp._parsed.cache_clear()
    unescapes.clear()  # count the form's parsing only, not the reader's
    form = FormModel(model)
    form.begin_run()
    for batch in batches:
        form.apply_many(batch)
    distinct = {pointer for batch in batches for pointer, *_ in batch}
    assert len(distinct) > 1000  # the catalog: a hundred rows
    tokens_once = sum(len(jp.parse(p)) for p in distinct)  # cached: decodes nothing more
    # each distinct pointer (and the parents and containers the form derives from them) decoded
    # once; the old code decoded every token of every pointer on every change, several times over
    assert len(unescapes) <= tokens_once * 5 // 4
    before = len(unescapes)
    form.restore()
    form.begin_run()
    for batch in batches:
        form.apply_many(batch)
    assert len(unescapes) == before  # a second run over the same pointers parses nothing


def test_parse_still_hands_out_a_fresh_list_and_rejects_what_it_rejected() -> None:
    first = jp.parse("/items/0/name")
    first[1] = "*"
    assert jp.parse("/items/0/name") == ["items", "0", "name"]
    assert jp.parse("/a~1b/c~0d") == ["a/b", "c~d"]
    assert jp.parse("") == []
    with pytest.raises(ValueError):
        jp.parse("items")


def test_a_second_change_to_a_field_parses_nothing(unescapes: list[str]) -> None:
    model, _ = _catalog_batches()
    form = FormModel(model)
    form.begin_run()
    form.apply("/items/0/name", FieldState.PROVISIONAL, "Wid")
    decoded = len(unescapes)
    form.apply("/items/0/name", FieldState.PROVISIONAL, "Widget")
    assert len(unescapes) == decoded
    assert form.state("/items/0") is FieldState.PROVISIONAL
    assert form.state("/items") is FieldState.PROVISIONAL
    assert form.state("") is FieldState.PROVISIONAL


def _calls(fn) -> int:  # noqa: ANN001
    """How many Python and builtin calls `fn()` makes (sys.setprofile counts each one)."""
    count = 0

    def profile(_frame, event: str, _arg) -> None:  # noqa: ANN001
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_a_snapshot_copies_the_values_once_and_shares_the_states() -> None:
    # the right-answer marks take a snapshot of the form at the end of every run (on the GUI
    # thread): copy.deepcopy of the document and a new entry per state cost ~10 calls a value
    scenario = load_scenarios()["catalog"]
    form = FormModel(schema_model(scenario.schema_name))
    form.begin_run()
    form.commit(scenario.output)
    nodes = len(list(walk(scenario.output, "")))
    assert nodes > 1300
    assert _calls(form.snapshot) < 5 * nodes  # 14,805 calls on the old code, ~5,600 now
    snapshot = form.snapshot()
    form.set_value("/items/0/sku", "changed")
    form.clear_value("/supplier")
    assert form.snapshot() != snapshot
    form.put_back(snapshot)
    assert form.snapshot() == snapshot
    assert form.committed == scenario.output
    assert form.state("/items/0/sku") is FieldState.SETTLED and form.origin("/items/0/sku") is not Origin.USER
    document = snapshot.document
    document["items"][0]["sku"] = "not in the form"  # a copy: the snapshot and the form keep theirs
    assert form.value("/items/0/sku") == scenario.output["items"][0]["sku"] == snapshot.document["items"][0]["sku"]
