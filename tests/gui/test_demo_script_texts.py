"""The texts docs/demo-script.md quotes that its walk on a real X server (test_demo_script.py)
cannot provoke on cue, read from where the app gets them."""

from __future__ import annotations

from livefill.gui.pending_start import WAITING_FOR_WARMUP
from livefill.widgets.field_base import USER_MARKER
from livefill.widgets.metrics_table import ROWS
from livefill.widgets.status_line import STARTING_TEXT
from tests.gui.test_demo_script import script_quote, script_section


def test_the_first_start_during_the_warm_up_is_quoted_as_the_app_says_it():
    assert script_quote("If something goes wrong", "⇄") == STARTING_TEXT
    assert script_quote("If something goes wrong", "starting as soon") == WAITING_FOR_WARMUP


def test_the_scoreboard_rows_and_the_users_mark_are_named_as_the_app_names_them():
    titles = {title for _, title, _ in ROWS}
    for quoted in ("Values shown that were never true", "First visible value", "Byte to pixel (p50 / p99)", "All settled"):
        assert quoted in titles and quoted in script_section("3:50"), quoted
    assert USER_MARKER in script_section("0:20")


def test_the_rows_the_script_points_at_come_first_so_a_short_scoreboard_shows_them():
    # at 1,280 x 720 the walk's scoreboard has room for four rows (test_demo_script checks they show)
    named = {"First visible value", "Byte to pixel (p50 / p99)", "All settled", "Values shown that were never true"}
    assert {title for _, title, _ in ROWS[:len(named)]} == named
