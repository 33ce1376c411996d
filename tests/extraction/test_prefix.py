"""Hand-written cases for livefill/extraction/prefix.py, one per promise its docstring makes, named after the rule."""

from __future__ import annotations

import dataclasses
import json
import pickle
import sys
import tracemalloc

import pytest

from livefill.errors import ProtocolError, UsageError
from livefill.extraction.prefix import Change, IncompleteJSON, JSONPrefixError, PrefixParser, ValueState
from tests.extraction.test_prefix_support import cut, feed_checked, same

PENDING, PROVISIONAL, SETTLED = ValueState.PENDING, ValueState.PROVISIONAL, ValueState.SETTLED


def C(pointer, state, value=None):  # noqa: N802  (reads like the dataclass)
    return Change(pointer, state, value)


def feed_all(*pieces: str) -> tuple[PrefixParser, list[list[Change]]]:
    parser = PrefixParser()
    return parser, [parser.feed(p) for p in pieces]


def by_pointer(changes: list[Change]) -> dict[str, Change]:
    return {c.pointer: c for c in changes}


# --- the API -----------------------------------------------------------------------------------


def test_value_state_members_are_pending_provisional_settled() -> None:
    assert [s.name for s in ValueState] == ["PENDING", "PROVISIONAL", "SETTLED"]


def test_change_is_a_frozen_dataclass() -> None:
    change = C("/a", SETTLED, 1)
    assert dataclasses.is_dataclass(change)
    assert [f.name for f in dataclasses.fields(change)] == ["pointer", "state", "value"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.pointer = "/b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.value = 2  # type: ignore[misc]
    assert dataclasses.replace(change, value=2) == C("/a", SETTLED, 2)
    assert repr(change) == "Change(pointer='/a', state=<ValueState.SETTLED: 'settled'>, value=1)"


def test_changes_from_the_parser_equal_hand_built_ones_and_pickle() -> None:
    _, (changes,) = feed_all('{"a/b": [true]}')
    assert changes == [
        C("", SETTLED, {"a/b": [True]}),
        C("/a~1b", SETTLED, [True]),
        C("/a~1b/0", SETTLED, True),
    ]
    assert pickle.loads(pickle.dumps(changes)) == changes
    assert dataclasses.asdict(changes[2]) == {"pointer": "/a~1b/0", "state": SETTLED, "value": True}


def test_json_prefix_error_is_a_protocol_error_with_offset() -> None:
    assert issubclass(JSONPrefixError, ProtocolError) and issubclass(JSONPrefixError, ValueError)
    assert issubclass(IncompleteJSON, JSONPrefixError)
    with pytest.raises(JSONPrefixError) as info:
        PrefixParser().feed("[1, x]")
    assert info.value.offset == 4
    assert "offset 4" in str(info.value)


def test_feed_after_close_is_a_usage_error() -> None:
    parser = PrefixParser()
    parser.feed("[]")
    parser.close()
    with pytest.raises(UsageError):
        parser.feed(" ")
    with pytest.raises(UsageError):
        parser.close()


def test_feed_after_an_error_is_a_usage_error() -> None:
    parser = PrefixParser()
    with pytest.raises(JSONPrefixError):
        parser.feed('{"a": x')
    with pytest.raises(UsageError):
        parser.feed("1}")
    with pytest.raises(UsageError):
        parser.close()


def test_feed_after_incomplete_close_is_a_usage_error() -> None:
    parser = PrefixParser()
    parser.feed('{"a": "b')
    with pytest.raises(IncompleteJSON):
        parser.close()
    with pytest.raises(UsageError):
        parser.feed('"}')


def test_feed_takes_str_only() -> None:
    parser = PrefixParser()
    with pytest.raises(UsageError):
        parser.feed(b"{}")  # type: ignore[arg-type]
    parser = PrefixParser()
    parser.feed('"ab')
    with pytest.raises(UsageError):
        parser.feed(b"c")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        parser.feed(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("before", ['"ab', '{"k": [1, {"x": "ab', '{"ke', "[12", "[tr", '["\\u00'])
def test_a_wrong_argument_type_changes_nothing(before: str) -> None:
    rest = {'"ab': '"', '{"k": [1, {"x": "ab': '"}]}', '{"ke': 'y": 1}', "[12": "]", "[tr": "ue]", '["\\u00': 'e9"]'}[before]
    reference = PrefixParser()
    expected = [reference.feed(before), reference.feed(rest), reference.close()]
    parser = PrefixParser()
    got = [parser.feed(before)]
    value, states = parser.value(), [parser.state(p) for p in ("", "/k", "/0")]
    with pytest.raises(UsageError):
        parser.feed(b"c")  # type: ignore[arg-type]
    assert parser.value() == value and [parser.state(p) for p in ("", "/k", "/0")] == states
    got += [parser.feed(rest), parser.close()]
    assert got == expected
    assert [[c.span for c in batch] for batch in got] == [[c.span for c in batch] for batch in expected]
    assert parser.value() == json.loads(before + rest)


def test_value_and_state_after_an_error_show_what_had_arrived() -> None:
    parser = PrefixParser()
    parser.feed('{"a": [1, "xy')
    with pytest.raises(JSONPrefixError):
        parser.feed('z", tru]')
    assert parser.value() == {"a": [1, "xyz"]}
    assert parser.state("/a/1") is SETTLED and parser.state("/a") is PROVISIONAL


def test_an_exception_inside_feed_leaves_the_parser_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    import livefill.extraction.prefix as prefix

    parser = PrefixParser()
    parser.feed('{"a": 1')

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(prefix, "_drop_replaced", interrupted)  # reached only by a duplicate key
    parser.feed(', "a"')
    with pytest.raises(KeyboardInterrupt):
        parser.feed(": 2")
    with pytest.raises(UsageError):
        parser.feed("}")
    with pytest.raises(UsageError):
        parser.close()


def test_the_parser_does_not_keep_the_text_it_was_fed() -> None:
    document = '{"a": "' + "x" * 10_000 + '", "b": [1, 2'
    held = sys.getrefcount(document)
    parser = PrefixParser()
    parser.feed(document)
    assert sys.getrefcount(document) == held
    parser.value()
    assert sys.getrefcount(document) == held


def test_a_kept_reference_to_feed_refuses_after_close_or_an_error_like_the_parser() -> None:
    parser = PrefixParser()
    feed = parser.feed
    feed("[1")
    with pytest.raises(IncompleteJSON):
        parser.close()
    with pytest.raises(UsageError):
        feed(", 2]")
    parser = PrefixParser()
    feed = parser.feed
    with pytest.raises(JSONPrefixError):
        feed("[1x")
    for _ in range(2):  # not StopIteration: that is swallowed silently by map() and generators
        with pytest.raises(UsageError):
            feed("1")
    parser = PrefixParser()
    feed = parser.feed
    feed('["ab')
    with pytest.raises(UsageError):
        feed(b"c")  # type: ignore[arg-type]
    assert [(c.pointer, c.value) for c in feed('c"]')] == [("/0", "abc"), ("", ["abc"])]


def test_feed_is_an_ordinary_method() -> None:
    import inspect

    assert list(inspect.signature(PrefixParser.feed).parameters) == ["self", "text"]
    assert PrefixParser.feed(PrefixParser(), text="[1]") == [C("", SETTLED, [1]), C("/0", SETTLED, 1)]

    class Counting(PrefixParser):
        __slots__ = ("calls",)

        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def feed(self, text: str) -> list[Change]:
            self.calls += 1
            return super().feed(text)

    parser = Counting()
    parser.feed("[1")
    parser.feed("]")
    assert parser.calls == 2 and parser.value() == [1]


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_parser_copied_mid_document_goes_on_by_itself(how: str) -> None:
    import copy

    text = '{"a": [1, {"b": "x\\u00e9y"}], "deep": ' + "[" * 300 + "]" * 300 + ', "n": -12.5e1}'
    for cut in (8, 14, 17, 40, 300, len(text) - 3):
        original = PrefixParser()
        original.feed(text[:cut])
        twin = pickle.loads(pickle.dumps(original)) if how == "pickle" else copy.deepcopy(original)
        assert twin.value() == original.value()
        rest_twin = [twin.feed(text[cut:]), twin.close()]
        assert original.value() != json.loads(text)  # the original has not moved
        rest = [original.feed(text[cut:]), original.close()]
        assert rest_twin == rest
        assert [[c.span for c in batch] for batch in rest_twin] == [[c.span for c in batch] for batch in rest]
        assert twin.value() == json.loads(text)
    closed = PrefixParser()
    closed.feed("12")
    closed.close()
    twin = pickle.loads(pickle.dumps(closed)) if how == "pickle" else copy.deepcopy(closed)
    assert twin.value() == 12
    with pytest.raises(UsageError):
        twin.feed(" ")


def test_a_parser_is_freed_as_soon_as_it_is_dropped() -> None:
    """The parser and the generator that holds its state must not keep each other alive: a
    long document would otherwise wait for the cycle collector."""
    import gc
    import weakref

    gc.disable()
    try:
        for text in ('{"a": [1, {"b": "x', '{"a": 1}', '{"a": x'):
            parser = PrefixParser()
            try:
                parser.feed(text)
            except JSONPrefixError:
                pass
            parser.value()
            gone = weakref.ref(parser)
            del parser
            assert gone() is None, text
    finally:
        gc.enable()


def test_feeding_nothing_changes_nothing() -> None:
    parser = PrefixParser()
    assert parser.feed("") == []
    assert parser.feed('{"a": "x') != []
    assert parser.feed("") == []
    assert parser.value() == {"a": "x"}


# --- pointers ----------------------------------------------------------------------------------


def test_pointers_are_rfc6901_with_the_root_as_empty_string() -> None:
    _, (changes,) = feed_all('{"a": {"b": [10, {"c": 1}]}}')
    assert [c.pointer for c in changes] == ["", "/a", "/a/b", "/a/b/0", "/a/b/1", "/a/b/1/c"]


def test_pointer_tokens_escape_tilde_as_0_and_slash_as_1() -> None:
    _, (changes,) = feed_all('{"a/b~c": {"~1": 0, "": 1, "/": 2}}')
    assert {c.pointer for c in changes} == {"", "/a~1b~0c", "/a~1b~0c/~01", "/a~1b~0c/", "/a~1b~0c/~1"}


def test_pointer_of_a_key_with_escapes_uses_the_decoded_key() -> None:
    _, (changes,) = feed_all('{"\\u00e9\\/\\"": 1}')
    assert changes[1] == C('/é~1"', SETTLED, 1)


# --- settling ----------------------------------------------------------------------------------


def test_string_settles_at_its_closing_quote() -> None:
    parser, calls = feed_all('{"a": "hi', '"', "}")
    assert calls[0][-1] == C("/a", PROVISIONAL, "hi")
    assert calls[1] == [C("/a", SETTLED, "hi")]
    assert calls[2] == [C("", SETTLED, {"a": "hi"})]


def test_number_is_not_settled_until_delimiter() -> None:
    parser, calls = feed_all('{"amount": 12')
    assert calls[0][-1] == C("/amount", PROVISIONAL, 12)
    assert parser.state("/amount") is PROVISIONAL
    assert parser.feed("}") == [C("/amount", SETTLED, 12), C("", SETTLED, {"amount": 12})]


def test_12_never_reported_as_settled_for_1200() -> None:
    parser = PrefixParser()
    calls = [parser.feed(piece) for piece in ['{"amount": 1', "2", "0", "0", "}"]]
    amount = [[c for c in changes if c.pointer == "/amount"] for changes in calls]
    assert amount[:4] == [[C("/amount", PROVISIONAL, v)] for v in (1, 12, 120, 1200)]
    assert amount[4] == [C("/amount", SETTLED, 1200)]


@pytest.mark.parametrize("delimiter", [" ", "\t", "\n", "\r", ",", "}"])
def test_number_settles_at_the_first_character_after_it(delimiter: str) -> None:
    parser, _ = feed_all('{"n": -1.5e3')
    rest = {"}": "", ",": ' "m": 0}'}.get(delimiter, "}")
    changes = parser.feed(delimiter)
    assert changes[0] == C("/n", SETTLED, -1500.0)
    parser.feed(rest)
    assert parser.close() == []


def test_number_in_an_array_settles_at_the_closing_bracket() -> None:
    _, calls = feed_all("[7", "]")
    assert calls[1] == [C("/0", SETTLED, 7), C("", SETTLED, [7])]


def test_top_level_number_settles_at_close() -> None:
    parser, calls = feed_all("4", "2")
    assert calls == [[C("", PROVISIONAL, 4)], [C("", PROVISIONAL, 42)]]
    assert parser.state("") is PROVISIONAL
    assert parser.close() == [C("", SETTLED, 42)]
    assert parser.value() == 42 and parser.state("") is SETTLED


def test_top_level_number_settles_at_trailing_whitespace() -> None:
    parser, calls = feed_all("-0.25", "\n")
    assert calls[1] == [C("", SETTLED, -0.25)]
    assert parser.close() == []


@pytest.mark.parametrize("literal, value", [("true", True), ("false", False), ("null", None)])
def test_literals_settle_at_their_last_letter(literal: str, value: object) -> None:
    text = '{"x": ' + literal + "}"
    last = text.index(literal) + len(literal)
    parser, calls = feed_all(text[: last - 1], text[last - 1], "}")
    assert all(c.pointer != "/x" or c.state is PENDING for c in calls[0])
    assert calls[1] == [C("/x", SETTLED, value)]


def test_containers_settle_at_their_closing_bracket() -> None:
    parser, calls = feed_all('{"a": [1, {"b": "c"}', "]", "}")
    assert calls[1] == [C("/a", SETTLED, [1, {"b": "c"}])]
    assert calls[2] == [C("", SETTLED, {"a": [1, {"b": "c"}]})]


def test_settled_value_is_exactly_json_loads_value_for_its_pointer() -> None:
    text = '{"i": 1, "f": 1.0, "e": 1e0, "t": true, "z": -0, "fz": -0.0, "big": 12345678901234567890, "s": "\\ud83d\\ude00"}'
    _, (changes,) = feed_all(text)
    expected = json.loads(text)
    for change in changes[1:]:
        assert same(change.value, expected[change.pointer[1:]]), change
    assert type(by_pointer(changes)["/i"].value) is int
    assert type(by_pointer(changes)["/f"].value) is float
    assert type(by_pointer(changes)["/t"].value) is bool
    assert same(changes[0].value, expected)


def test_one_and_one_point_zero_and_true_are_different() -> None:
    _, (changes,) = feed_all("[1, 1.0, true]")
    values = [c.value for c in changes[1:]]
    assert [type(v) for v in values] == [int, float, bool]


def test_no_change_follows_settled_for_a_pointer() -> None:
    text = '{"a": "xy", "b": [1, 22, {"c": null}], "d": 3.5}'
    for size in range(1, len(text) + 1):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        feed_checked(text, pieces)  # asserts no change after SETTLED


def test_duplicate_key_replaces_a_settled_value_last_wins() -> None:
    parser, calls = feed_all('{"a": 1, ', '"a": ', "2", "}")
    assert C("/a", SETTLED, 1) in calls[0]
    assert calls[1] == [C("/a", PENDING)]
    assert calls[2] == [C("/a", PROVISIONAL, 2)]
    assert calls[3] == [C("/a", SETTLED, 2), C("", SETTLED, {"a": 2})]
    assert parser.value() == json.loads('{"a": 1, "a": 2}')


def test_duplicate_key_keeps_the_first_position_like_json_loads() -> None:
    text = '{"a": 1, "b": 2, "a": {"x": [3]}}'
    parser, _ = feed_all(text)
    assert list(parser.value().items()) == list(json.loads(text).items())


def test_duplicate_key_in_one_feed_reports_only_the_last_value() -> None:
    _, (changes,) = feed_all('{"a": {"x": [1]}, "b": 0, "a": 2}')
    assert changes == [C("", SETTLED, {"a": 2, "b": 0}), C("/b", SETTLED, 0), C("/a", SETTLED, 2)]


# --- pending -----------------------------------------------------------------------------------


def test_pending_is_reported_once_key_and_colon_arrived() -> None:
    parser = PrefixParser()
    assert parser.feed('{"name"') == [C("", PROVISIONAL, {})]
    assert parser.state("/name") is None
    assert parser.feed(":") == [C("/name", PENDING, None)]
    assert parser.state("/name") is PENDING
    assert parser.feed(" ") == []  # whitespace reports nothing new
    assert parser.state("/name") is PENDING
    assert parser.feed('"') == [C("/name", PROVISIONAL, "")]
    assert parser.state("/name") is PROVISIONAL


def test_key_without_its_colon_is_not_pending() -> None:
    parser = PrefixParser()
    assert parser.feed('{"na') == [C("", PROVISIONAL, {})]
    assert parser.feed('me" ') == []
    assert parser.state("/name") is None


@pytest.mark.parametrize("start", ["t", "tr", "tru", "f", "fals", "n", "nul", "-"])
def test_value_whose_first_bytes_are_not_reportable_stays_pending(start: str) -> None:
    parser, calls = feed_all('{"v": ', start)
    assert calls[0][-1] == C("/v", PENDING, None)
    assert calls[1] == []
    assert parser.state("/v") is PENDING
    assert parser.value() == {}


def test_pending_collapses_into_provisional_within_one_feed() -> None:
    _, (changes,) = feed_all('{"a": "x')
    assert changes == [C("", PROVISIONAL, {}), C("/a", PROVISIONAL, "x")]
    _, (changes,) = feed_all('{"a": 1')
    assert changes == [C("", PROVISIONAL, {}), C("/a", PROVISIONAL, 1)]


def test_pending_with_an_unreportable_start_is_reported_in_the_same_feed() -> None:
    _, (changes,) = feed_all('{"a": -')
    assert changes == [C("", PROVISIONAL, {}), C("/a", PENDING, None)]


def test_array_items_are_never_pending() -> None:
    parser, calls = feed_all("[1, ", "t")
    assert calls[0] == [C("", PROVISIONAL, []), C("/0", SETTLED, 1)]
    assert calls[1] == []
    assert parser.state("/1") is PENDING  # a byte of it arrived, none reportable


# --- provisional -------------------------------------------------------------------------------


def test_provisional_string_is_the_prefix_received() -> None:
    parser = PrefixParser()
    parser.feed('["')
    got = [parser.feed(ch)[0].value for ch in "hello"]
    assert got == ["h", "he", "hel", "hell", "hello"]


def test_opening_quote_reports_an_empty_provisional_string() -> None:
    _, (changes,) = feed_all('{"a": "')
    assert changes[-1] == C("/a", PROVISIONAL, "")


def test_dangling_backslash_is_held_back() -> None:
    parser, calls = feed_all('["ab\\', "n", "c")
    assert calls[0][-1] == C("/0", PROVISIONAL, "ab")
    assert calls[1] == [C("/0", PROVISIONAL, "ab\n")]
    assert calls[2] == [C("/0", PROVISIONAL, "ab\nc")]


def test_half_a_unicode_escape_is_held_back() -> None:
    parser = PrefixParser()
    parser.feed('["x')
    values = [parser.feed(ch)[0].value for ch in "\\u00e9y"]
    assert values == ["x", "x", "x", "x", "x", "xé", "xéy"]


def test_first_half_of_a_surrogate_pair_is_held_back() -> None:
    parser = PrefixParser()
    parser.feed('["a')
    values = [parser.feed(ch)[0].value for ch in "\\ud83d\\ude00b"]
    assert values[:-2] == ["a"] * 11
    assert values[-2:] == ["a\U0001f600", "a\U0001f600b"]


def test_lone_high_surrogate_is_released_when_the_next_character_is_not_its_partner() -> None:
    parser, calls = feed_all('["\\ud800', "x")
    assert calls[0][-1].value == ""
    assert calls[1] == [C("/0", PROVISIONAL, "\ud800x")]
    parser, calls = feed_all('["\\ud800\\', "n")
    assert calls[1] == [C("/0", PROVISIONAL, "\ud800\n")]
    parser, calls = feed_all('["\\ud800\\u00', "41")
    assert calls[0][-1].value == ""
    assert calls[1] == [C("/0", PROVISIONAL, "\ud800A")]


def test_every_feed_that_delivers_string_bytes_reports_the_string() -> None:
    text = '{"k": "caf\\u00e9 \\"ok\\" \\ud83d\\ude00 end", "n": ["x"]}'
    for size in (1, 2, 3, 5):
        parser = PrefixParser()
        for start in range(0, len(text), size):
            piece = text[start : start + size]
            changes = parser.feed(piece)
            value_start = text.index('"caf')
            if value_start <= start < text.index(', "n"'):
                assert any(c.pointer == "/k" for c in changes), (size, piece)


@pytest.mark.parametrize(
    "received, value",
    [
        ("-", None),
        ("0", 0),
        ("-0", 0),
        ("1", 1),
        ("12", 12),
        ("12.", 12),
        ("12.5", 12.5),
        ("1e", 1),
        ("1E+", 1),
        ("1e5", 100000.0),
        ("1.5e", 1.5),
        ("1.5e-", 1.5),
        ("1.5e-2", 0.015),
        ("-0.", 0),
        ("-0.0", -0.0),
    ],
)
def test_provisional_number_is_the_number_its_digits_spell(received: str, value: object) -> None:
    parser, (changes,) = feed_all('{"n": ' + received)
    reported = by_pointer(changes)["/n"]
    if value is None:
        assert reported == C("/n", PENDING, None)
        assert parser.value() == {}
    else:
        assert reported.state is PROVISIONAL
        assert same(reported.value, value)
        assert same(parser.value(), {"n": value})


def test_provisional_number_never_invents_a_digit() -> None:
    parser = PrefixParser()
    parser.feed("[")
    reported = [c.value for ch in "-12.50e+3" for c in parser.feed(ch)]
    texts = ["-1", "-12", "-12", "-12.5", "-12.50", "-12.50", "-12.50", "-12.50e+3"]
    assert [json.loads(t) for t in texts] == reported


def test_literal_prefixes_are_never_reported_as_values() -> None:
    parser = PrefixParser()
    parser.feed("[")
    assert [parser.feed(ch) for ch in "fals"] == [[], [], [], []]
    assert parser.value() == []
    assert parser.feed("e") == [C("/0", SETTLED, False)]


def test_container_reports_empty_provisional_when_it_opens() -> None:
    parser, calls = feed_all('{"rows"', ': [', '{"a": 1}')
    assert calls[0] == [C("", PROVISIONAL, {})]
    assert calls[1] == [C("/rows", PROVISIONAL, [])]
    assert calls[2] == [C("/rows/0", SETTLED, {"a": 1}), C("/rows/0/a", SETTLED, 1)]


def test_container_reports_nothing_more_until_it_settles() -> None:
    parser = PrefixParser()
    text = '[[1, [2, 3], "x"], 4]'
    for ch in text[:-1]:
        for change in parser.feed(ch):
            if change.pointer == "":
                assert change == C("", PROVISIONAL, [])
    assert parser.feed("]")[-1] == C("", SETTLED, [[1, [2, 3], "x"], 4])


def test_provisional_container_values_are_fresh_objects() -> None:
    parser, (changes,) = feed_all('{"a": [')
    changes[1].value.append("mine")
    changes[0].value["mine"] = 1
    assert parser.value() == {"a": []}


# --- one change per pointer per feed -------------------------------------------------------------


def test_at_most_one_change_per_pointer_per_feed() -> None:
    text = '{"a": {"b": [1, "two", {"c": [true, null]}], "d": ""}, "e": -1e-2}'
    for size in range(1, len(text) + 1):
        feed_checked(text, [text[i : i + size] for i in range(0, len(text), size)])


def test_container_opened_and_closed_in_one_feed_reports_settled_only() -> None:
    _, calls = feed_all('{"a": ', '[1, 2]', "}")
    assert calls[1] == [C("/a", SETTLED, [1, 2]), C("/a/0", SETTLED, 1), C("/a/1", SETTLED, 2)]


def test_parent_that_opens_in_a_feed_comes_before_its_children() -> None:
    _, (changes,) = feed_all('{"a": [{"b": "c"}, "d')
    assert [c.pointer for c in changes] == ["", "/a", "/a/0", "/a/0/b", "/a/1"]


# --- errors ------------------------------------------------------------------------------------

INVALID = [
    ("NaN", 0),
    ("[NaN]", 1),
    ("[Infinity]", 1),
    ("[-Infinity]", 2),
    ("[1] // c", 4),
    ("[1, /* c */ 2]", 4),
    ("[1,]", 3),
    ('{"a": 1,}', 8),
    ("['a']", 1),
    ('{\'a\': 1}', 1),
    ('["a\tb"]', 3),
    ('["a\nb"]', 3),
    ('["\x00"]', 2),
    ("[01]", 2),
    ("[-01]", 3),
    ("[00]", 2),
    ("[1.]", 3),
    ("[1.e5]", 3),
    ("[.5]", 1),
    ("[+1]", 1),
    ("[1e]", 3),
    ("[1e+]", 4),
    ("[0x10]", 2),
    ("[1 2]", 3),
    ('{"a" 1}', 5),
    ('{"a": 1 "b": 2}', 8),
    ("{1: 2}", 1),
    ("[1}", 2),
    ('{"a": 1]', 7),
    ("[tru]", 4),
    ("[truth]", 4),
    ("[nul]", 4),
    ('["\\x"]', 3),
    ('["\\u12g4"]', 6),
    ('["\\ud800\\uzzzz"]', 10),
    ("[1] x", 4),
    ("{} {}", 3),
    ("1 2", 2),
    ('"a" "b"', 4),
    ("\ufeff{}", 0),
    ("[\u00a0]", 1),
    ("[\f1]", 1),
    ("[\v1]", 1),
    ("]", 0),
    (",", 0),
]


@pytest.mark.parametrize("text, offset", INVALID)
def test_invalid_json_raises_at_the_first_impossible_character(text: str, offset: int) -> None:
    with pytest.raises(JSONPrefixError) as info:
        PrefixParser().feed(text)
    assert info.value.offset == offset
    assert not isinstance(info.value, IncompleteJSON)
    PrefixParser().feed(text[:offset])  # everything before it is a viable prefix


@pytest.mark.parametrize("text, offset", INVALID)
def test_error_offset_is_the_same_however_the_text_is_cut(text: str, offset: int) -> None:
    for size in range(1, 5):
        parser = PrefixParser()
        with pytest.raises(JSONPrefixError) as info:
            for start in range(0, len(text), size):
                parser.feed(text[start : start + size])
        assert info.value.offset == offset, size


def test_error_is_raised_by_the_feed_that_delivers_the_impossible_character() -> None:
    parser = PrefixParser()
    parser.feed('{"a": [1, 2')
    parser.feed(".")
    with pytest.raises(JSONPrefixError) as info:
        parser.feed("]")
    assert info.value.offset == 12


def test_lone_surrogate_escapes_are_accepted_as_json_loads_accepts_them() -> None:
    for text in ['["\\ud800"]', '["\\udc00"]', '["\\udc00\\ud800"]', '["\\ud800\\ud800\\udc00"]', '{"\\udfaa": 0}']:
        assert same(feed_checked(text, list(text))[0], json.loads(text))


def test_whitespace_after_the_top_level_value_is_fine() -> None:
    for text in ["{} ", "[1]\n\n", '"x"\t', "true \r\n", "12 "]:
        parser = PrefixParser()
        parser.feed(text)
        parser.close()
        assert parser.value() == json.loads(text)


def test_anything_else_after_the_top_level_value_is_an_error() -> None:
    for text, offset in [("{}x", 2), ("[] ,", 3), ("null}", 4), ('"a"]', 3)]:
        with pytest.raises(JSONPrefixError) as info:
            PrefixParser().feed(text)
        assert info.value.offset == offset


def test_close_raises_incomplete_json_naming_the_pointers_that_never_settled() -> None:
    parser, _ = feed_all('{"a": {"b": [1, "x')
    with pytest.raises(IncompleteJSON) as info:
        parser.close()
    assert list(info.value.pointers) == ["", "/a", "/a/b", "/a/b/1"]
    assert info.value.pointers == ["", "/a", "/a/b", "/a/b/1"]
    assert info.value.offset == len('{"a": {"b": [1, "x')


@pytest.mark.parametrize(
    "text, pointers",
    [
        ("", [""]),
        ("   ", [""]),
        ("tr", [""]),
        ("-", [""]),
        ("1.", [""]),
        ('"abc', [""]),
        ("[", [""]),
        ("[1,", [""]),
        ('{"a"', [""]),
        ('{"a":', ["", "/a"]),
        ('{"a": nul', ["", "/a"]),
        ('{"a": 12', ["", "/a"]),
        ('{"a": [1', ["", "/a", "/a/0"]),
    ],
)
def test_close_on_an_incomplete_document_raises_incomplete_json(text: str, pointers: list[str]) -> None:
    parser = PrefixParser()
    parser.feed(text)
    with pytest.raises(IncompleteJSON) as info:
        parser.close()
    assert list(info.value.pointers) == pointers
    assert info.value.offset == len(text)


def test_a_number_is_read_up_to_its_longest_prefix_json_could_still_accept() -> None:
    """Every string of number characters up to 5 long, inside an array: the parser settles what
    json.loads reads, or fails at the first character no completion could make valid."""
    import itertools

    from livefill.extraction.prefix import _number_head

    def number(text: str) -> bool:
        try:
            return type(json.loads(text)) in (int, float)
        except ValueError:
            return False

    def can_begin(text: str) -> bool:
        return text == "" or number(text) or number(text + "0")

    checked = 0
    for size in range(1, 6):
        for letters in itertools.product("-+.eE019", repeat=size):
            text = "".join(letters)
            longest = max(k for k in range(len(text) + 1) if can_begin(text[:k]))
            assert _number_head(text).end() == longest, text
            if text[0] not in "-0123456789":
                continue
            checked += 1
            parser = PrefixParser()
            pieces = ["[", text[:2], text[2:], "]"]
            if number(text):
                for piece in pieces:
                    parser.feed(piece)
                assert same(parser.value(), json.loads(text.join("[]"))), text
            else:
                offset = 1 + longest
                with pytest.raises(JSONPrefixError) as info:
                    for piece in pieces:
                        parser.feed(piece)
                assert info.value.offset == offset, text
    assert checked > 10_000


def test_integer_longer_than_the_interpreter_allows_is_refused_like_json_loads() -> None:
    limit = sys.get_int_max_str_digits()
    if not limit:
        pytest.skip("no integer digit limit in this interpreter")
    text = "[" + "7" * (limit + 5) + "]"
    with pytest.raises(ValueError):
        json.loads(text)
    for size in (len(text), 1000):
        parser = PrefixParser()
        with pytest.raises(JSONPrefixError) as info:
            for start in range(0, len(text), size):
                parser.feed(text[start : start + size])
        assert info.value.offset == 1 + limit


# --- nesting -----------------------------------------------------------------------------------


def _depth_of(value: object) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value = value[0]
        depth += 1
    return depth


@pytest.mark.slow
def test_nesting_depth_is_limited_only_by_memory() -> None:
    depth = 100_000  # far past the interpreter's recursion limit
    text = "[" * depth + "]" * depth
    for pieces in ([text], cut(text, range(0, len(text), 7919))):
        parser = PrefixParser()
        for piece in pieces:
            parser.feed(piece)
        parser.close()
        assert _depth_of(parser.value()) == depth - 1


def test_deep_pointers_are_built_when_read_and_are_right() -> None:
    depth = 5000
    parser = PrefixParser()
    changes = parser.feed('{"k/": ' * depth + "1")
    assert len(changes) == depth + 1
    assert changes[-1] == C("/k~1" * depth, PROVISIONAL, 1)
    assert changes[depth // 2].pointer == "/k~1" * (depth // 2)
    assert parser.state("/k~1" * depth) is PROVISIONAL


@pytest.mark.slow
def test_memory_stays_proportional_to_depth_for_deep_open_brackets() -> None:
    depth = 20_000  # eager pointer strings would need ~400 MB here (tracemalloc is slow: keep it small)
    tracemalloc.start()
    try:
        parser = PrefixParser()
        changes = parser.feed("[" * depth)
        with pytest.raises(IncompleteJSON) as info:
            parser.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(changes) == depth and len(info.value.pointers) == depth
    assert peak < 30 * 1024 * 1024, peak
    assert info.value.pointers[3] == "/0/0/0"
    assert changes[-1].pointer == "/0" * (depth - 1)


# --- value() and state() -----------------------------------------------------------------------


def test_value_is_none_before_any_value_began() -> None:
    parser = PrefixParser()
    assert parser.value() is None
    parser.feed("  \n")
    assert parser.value() is None
    parser.feed("tr")
    assert parser.value() is None
    parser.feed("ue")
    assert parser.value() is True


def test_value_holds_settled_and_provisional_values_and_omits_pending_keys() -> None:
    parser, _ = feed_all('{"a": 1, "b": [true, "x", {"c": 2.', "")
    assert parser.value() == {"a": 1, "b": [True, "x", {"c": 2}]}
    parser.feed('5}], "pending":')
    assert parser.value() == {"a": 1, "b": [True, "x", {"c": 2.5}]}
    parser.feed(' "y')
    assert parser.value() == {"a": 1, "b": [True, "x", {"c": 2.5}], "pending": "y"}


def test_value_equals_json_loads_after_close() -> None:
    text = '{"a": [1, 2.5, {"b": null}], "c": "\\u00e9", "d": {}}'
    parser, _ = feed_all(*text)
    parser.close()
    assert same(parser.value(), json.loads(text))


def test_value_is_a_snapshot_of_the_open_containers() -> None:
    parser, _ = feed_all('{"a": [1')
    before = parser.value()
    parser.feed(", 2")
    assert before == {"a": [1]}
    before["a"].append(99)
    assert parser.value() == {"a": [1, 2]}


def test_state_of_pointers_as_the_document_arrives() -> None:
    parser = PrefixParser()
    assert parser.state("") is None
    parser.feed('{"a": "x", "b": [1, {"c": tr')
    assert parser.state("") is PROVISIONAL
    assert parser.state("/a") is SETTLED
    assert parser.state("/b") is PROVISIONAL
    assert parser.state("/b/0") is SETTLED
    assert parser.state("/b/1") is PROVISIONAL
    assert parser.state("/b/1/c") is PENDING
    assert parser.state("/b/2") is None
    assert parser.state("/zz") is None
    assert parser.state("/a/0") is None
    assert parser.state("/b/01") is None
    parser.feed("ue}]}")
    assert parser.state("/b/1/c") is SETTLED
    assert parser.state("") is SETTLED
    assert parser.state("/nope") is None


def test_state_rejects_a_malformed_pointer() -> None:
    with pytest.raises(UsageError):
        PrefixParser().state("a")


# --- cost --------------------------------------------------------------------------------------


def test_nothing_received_is_kept_as_raw_text_except_an_unfinished_token() -> None:
    parser = PrefixParser()
    parser.feed('{"long": "')
    for _ in range(1000):
        parser.feed("abcdefgh ")
    parser._sync()
    assert parser._carry == ""  # string bodies are decoded as they arrive, never rescanned
    parser.feed("\\u00")
    parser._sync()
    assert parser._carry == "\\u00"  # only an unfinished escape waits
    parser.feed('e9"}')
    parser.close()
    assert parser.value()["long"].endswith("é")


def test_a_realistic_extraction_streams_correctly_under_many_cuttings() -> None:
    text = json.dumps(
        {
            "customer_name": "Jürgen \"JJ\" Müller",
            "amount": 1234.5,
            "paid": False,
            "line_items": [
                {"sku": "A-1", "description": "Desk\nlamp", "qty": 2, "unit_price": 19.99},
                {"sku": "B/2", "description": "Chair 🪑", "qty": 1, "unit_price": 120},
            ],
            "notes": None,
        },
        indent=2,
    )
    for size in (1, 2, 3, 4, 7, 16, 64):
        feed_checked(text, [text[i : i + size] for i in range(0, len(text), size)])
