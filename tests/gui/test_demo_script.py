"""docs/demo-script.md walked on a real X server, as a presenter walks it, checking what the audience sees.

Xvfb at 1,280 × 720 (and 1,024 × 768) with openbox; the real `livefill` started with the script's
own command line (its /tmp files moved to the test's folder); keys, clicks and typing by xdotool.
What is on screen is read from the app's state file (LIVEFILL_STATE_FILE, livefill.gui.state_dump).
The texts the script quotes in `code` (status lines, the inspector's line) are read from the
script and must match what the app shows, numbers aside: change the app's words and this test
says the script needs the new ones. A picture of the screen is taken at every step (the test's
folder; LIVEFILL_DEMO_PICTURES=DIR copies them there). Skipped, with its reason, only outside CI
when Xvfb, xdotool, openbox or ImageMagick is missing (`.ci/run` installs them).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gui.xdisplay import REPO, LiveApp, XDisplay, missing_tools, summary

pytestmark = pytest.mark.slow

SCRIPT = REPO / "docs" / "demo-script.md"
MODES = ("naive", "partial", "settled")
SCREENS = {"1280x720": (90, 1280, 720), "1024x768": (89, 1024, 768)}
MISSING = missing_tools()
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
if MISSING and not IN_CI:
    pytestmark = [pytest.mark.slow, pytest.mark.skip(reason=f"needs a real X server: install {', '.join(MISSING)} (.ci/run does)")]

# -- the script's words ---------------------------------------------------------------------------


def script_section(heading: str) -> str:
    """The text of the section whose heading starts with `heading`, on one line."""
    text = SCRIPT.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    found = [p for p in parts if p.startswith(heading)]
    assert found, f"docs/demo-script.md has no section '## {heading}…'"
    return " ".join(found[0].split())


def script_quote(heading: str, start: str) -> str:
    """The `code` quote of section `heading` that starts with `start`."""
    quotes = [q for q in re.findall(r"`([^`]+)`", script_section(heading)) if q.startswith(start)]
    assert quotes, f"docs/demo-script.md's section '{heading}' quotes no `{start}…`"
    return quotes[0]


def script_bold(heading: str, sentence: str) -> list[str]:
    """The **bold** words of the sentence of section `heading` that starts with `sentence`."""
    section = script_section(heading)
    at = section.index(sentence)
    return re.findall(r"\*\*([^*]+)\*\*", section[at:section.index(". ", at)])


def shows(text: str | None, quote: str) -> bool:
    """True if `text` is `quote`, numbers aside (each number of the quote stands for any number)."""
    pattern = re.sub(r"\\ ", " ", re.escape(" ".join(quote.split())))
    pattern = re.sub(r"\d+(?:[.,]\d+)*", r"\\d+(?:[.,]\\d+)*", pattern)
    return re.fullmatch(pattern, " ".join((text or "").split())) is not None


def number(cell: str) -> int:
    found = re.search(r"\d+", cell)
    assert found, f"no number in {cell!r}"
    return int(found.group())


# -- reading the state ------------------------------------------------------------------------------


def status(s: dict[str, Any]) -> str:
    return " ".join((s["status_line"] or {}).get("text", "").split())


def toolbar_text(s: dict[str, Any]) -> list[str]:
    return [" ".join(t["text"].split()) for t in s["toolbar"] if t["visible"] and t["text"].strip()]


def toolbar_item(s: dict[str, Any], start: str) -> dict[str, Any]:
    found = [t for t in s["toolbar"] if t["visible"] and t["text"].strip().startswith(start)]
    assert found, f"no toolbar item {start!r} visible: {toolbar_text(s)}"
    return found[0]


def lane(s: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in s["lanes"] if x["mode"] == name)


def metric(s: dict[str, Any], row: str, lane_name: str) -> str:
    m = s["metrics"]
    return m["rows"][row][m["columns"].index(next(c for c in m["columns"] if c.startswith(lane_name)))]


def empty(fields: dict[str, Any]) -> bool:
    return all(f["state"] == "empty" and not f["text"] for f in fields.values())


def inside(rect: list[int], area: list[int]) -> bool:
    return (rect[0] >= area[0] and rect[1] >= area[1]
            and rect[0] + rect[2] <= area[0] + area[2] and rect[1] + rect[3] <= area[1] + area[3])


def behind_more(app: LiveApp, s: dict[str, Any], start: str) -> bool:
    """If the toolbar item `start` does not fit (a narrow screen), open the toolbar's ›› first
    (True: it did)."""
    if any(t["visible"] and t["text"].strip().startswith(start) for t in s["toolbar"]):
        return False
    assert s["toolbar_more"], f"{start!r} is neither in the toolbar nor behind ››: {toolbar_text(s)}"
    app.click_until(s["toolbar_more"]["rect"], lambda s: toolbar_item(s, start), f"{start!r} shown by ››")
    return True


def fold_more(app: LiveApp, start: str) -> None:
    """Click ›› again, so that the items behind it stop covering the window under the toolbar."""
    s = app.state()
    app.click_until(s["toolbar_more"]["rect"], lambda s: not any(
        t["visible"] and t["text"].strip().startswith(start) for t in s["toolbar"]), "the toolbar's ›› folded")


def no_dialog(s: dict[str, Any]) -> None:
    assert not s["dialogs"], f"an unexpected dialog is open: {s['dialogs']}"


# -- the walk ----------------------------------------------------------------------------------------


@pytest.fixture(params=list(SCREENS))
def screen(request, tmp_path) -> Iterator[XDisplay]:
    number_, width, height = SCREENS[request.param]
    display = XDisplay(number_, width, height, tmp_path)
    yield display
    display.stop()


def launch_command(folder: Path) -> list[str]:
    """The script's own command line (its /tmp files in `folder`), without the leading `livefill`."""
    blocks = re.findall(r"```\n\s*(livefill [^\n]+)\n", SCRIPT.read_text(encoding="utf-8"))
    assert blocks, "docs/demo-script.md shows no livefill command line in a code block"
    argv = shlex.split(blocks[0])[1:]
    return [str(folder / Path(a).name) if a.startswith("/tmp/") else a for a in argv]


def test_the_demo_script_as_a_presenter_walks_it(screen, tmp_path):
    pictures = os.environ.get("LIVEFILL_DEMO_PICTURES")
    size = f"{screen.width}x{screen.height}"
    app = LiveApp(screen, tmp_path, launch_command(tmp_path),
                  pictures=Path(pictures) / size if pictures else None)
    problems: list[str] = []
    try:
        walk(app, screen, problems)
    except AssertionError as exc:
        app.shot("failed")
        raise AssertionError("\n".join([str(exc), *(["found before:"] + problems if problems else [])])) from None
    finally:
        app.stop()
        print(f"pictures of the walk at {size}: {tmp_path}")
    assert not problems, "\n".join(problems)


def walk(app: LiveApp, screen: XDisplay, problems: list[str]) -> None:
    """Walk the script; what it finds wrong that need not stop the walk goes to `problems` (the
    walk goes on past a picture that does not match, so one run shows every problem)."""

    def check(ok: object, message: str) -> None:
        if not ok:
            problems.append(message)
            app.shot("problem")

    # -- before the audience arrives --------------------------------------------------------------
    s = app.wait(lambda s: s["window"]["active"] and status(s).startswith("○"), "the window, shown and ready", 120)
    app.shot("launched")
    app.focus_window()
    window = s["window"]
    check(inside(window["frame"], window["available"]),
          f"the window opens larger than the {screen.width} × {screen.height} screen: frame {window['frame']}")
    title = window["frame"][:3] + [window["geometry"][1] - window["frame"][1]]
    app.click(title, double=True, y=0.5)  # openbox: a double click on the title bar maximizes
    s = app.wait(lambda s: s["window"]["maximized"], "the window maximized", 30)
    # (maximized, openbox may push its 1-px border and bottom handle off the screen: the window's own area counts)
    check(inside(s["window"]["geometry"], s["window"]["available"]), f"the maximized window is larger than the screen: {s['window']}")
    check(inside(s["status_line"]["rect"], s["window"]["available"]), "the status line is below the screen")
    shown = " ".join(toolbar_text(s))
    behind = re.search(r"[^.]*sit behind the toolbar's[^.]*", " ".join(SCRIPT.read_text(encoding="utf-8").split()))
    behind = behind.group() if behind else ""  # "at 1,024 px wide, Fault, … sit behind the toolbar's ››"
    at = 0
    for word in script_bold("Before", "Check the toolbar reads"):
        found = shown.find(word, at)
        if found < 0 and s["toolbar_more"] and any(not t["visible"] and t["text"].strip().startswith(word) for t in s["toolbar"]):
            check(word.split(":")[0] in behind, f"{word!r} is behind the toolbar's ›› and the script does not say so")
            continue
        check(found >= 0, f"the toolbar does not read {word!r} (after what came before): {shown!r}")
        at = max(at, found + len(word))
    assert s["legend"]["visible"], "the legend strip is not shown"
    app.wait(lambda s: s["warm"], "the demo provider warmed up", 120)
    assert empty(s["fields"]), f"the form is not empty at launch: {summary(s)}"
    no_dialog(s)
    app.shot("before-the-audience")

    # -- 0:00 the question ----------------------------------------------------------------------
    for mark in ("✓ final", "… still arriving", "◌ waiting", "✗ invalid", "✎ yours"):
        assert mark in script_section("0:00") and mark in s["legend"]["text"], mark
    assert "INVOICE" in s["source"]
    app.shot("0-00-the-question")

    # -- 0:20 your own value, and a real Stop -----------------------------------------------------------
    app.click_until(s["fields"]["/customer_name"]["rect"], lambda s: (s["focus"] or {}).get("field") == "/customer_name",
                    "the focus in Customer name")
    app.type("ACME Ltd")
    app.wait(lambda s: s["fields"]["/customer_name"]["editor"] == "ACME Ltd", "ACME Ltd typed", 30)
    app.shot("0-20-typed")
    app.key("ctrl+Return")
    s = app.wait(lambda s: s["active"] and s["fields"]["/customer_name"]["text"] == "Martinez SA"
                 and any(f["state"] != "settled" for f in s["fields"].values()),
                 "the model's Martinez SA in Customer name, other fields still arriving", 60)
    app.shot("0-20-running")
    app.key("Escape")
    s = app.wait(lambda s: not s["active"] and status(s).startswith("■"), "the run stopped", 60)
    app.shot("0-20-stopped")
    quote = script_quote("0:20", "■")
    check(shows(status(s), quote), f"the status line reads {status(s)!r}, the script says {quote!r}")
    name = s["fields"]["/customer_name"]
    assert (name["text"], name["marker"]) == ("ACME Ltd", "✎ yours"), name
    others = {p: f for p, f in s["fields"].items() if p != "/customer_name"}
    assert empty(others), f"the form did not go back to empty: {summary(s)}"
    no_dialog(s)

    # -- 1:00 a run to the end, in partial mode ---------------------------------------------------
    seq = app.seq
    app.key("ctrl+Return")
    s = app.wait(lambda s: s["active"], "the run started", 60, after=seq)
    amounts, provisional = set(), set()
    pictured = False
    while s["active"]:
        amounts.add(s["fields"]["/amount"]["text"])
        provisional |= {p for p, f in s["fields"].items() if f["state"] == "provisional"}
        if provisional and not pictured:
            app.shot("1-00-mid-run")
            pictured = True
        s = app.wait(lambda x, seq=s["seq"]: True, "the next state", 60, after=s["seq"])
    assert provisional, "no field was ever seen still arriving"
    assert amounts <= {"", "1200"}, f"partial mode showed an unsettled Amount: {amounts}"
    app.shot("1-00-committed")
    quote = script_quote("1:00", "✓ committed")
    check(shows(status(s), quote), f"the status line reads {status(s)!r}, the script says {quote!r}")
    unsettled = {p: f["state"] for p, f in s["fields"].items() if f["state"] != "settled"}
    assert not unsettled, f"fields not settled at the end: {unsettled}"
    assert s["fields"]["/amount"]["text"] == "1200"
    assert s["fields"]["/line_items"]["cells"], "no line items"
    said = " ".join(script_section("1:00").split())  # each ✓ becomes "✓ right", and the legend says so
    check('"✓ right"' in said and "✓ right / ✗ wrong" in said, "the 1:00 act does not say ✓ right")
    try:
        s = app.wait(lambda s: s["fields"]["/customer_name"]["marker"] == "✓ right"
                     and "✓ right / ✗ wrong" in s["legend"]["text"], "the committed form marked ✓ right", 10)
    except AssertionError as exc:
        check(False, str(exc))

    # -- 1:40 where the bytes came from ---------------------------------------------------------------
    app.key("ctrl+i")
    s = app.wait(lambda s: s["inspector"]["visible"], "the wire inspector open", 30)
    s = app.click_until(s["fields"]["/amount"]["rect"], lambda s: s["inspector"]["field"] == "/amount",
                        "the inspector's Field box on /amount")
    quote = script_quote("1:40", "/amount:")
    check(shows(s["inspector"]["line"], quote), f"the inspector reads {s['inspector']['line']!r}, the script says {quote!r}")
    check("/amount" in s["inspector"]["field_box"], f"the Field box reads {s['inspector']['field_box']!r}")
    app.shot("1-40-inspector")
    app.key("ctrl+i")
    app.wait(lambda s: not s["inspector"]["visible"], "the wire inspector closed", 30)

    # -- 2:20 when the model gets it wrong ----------------------------------------------------------------
    unfolded = behind_more(app, s, "Fault: none")
    app.open(lambda s: toolbar_item(s, "Fault: none")["rect"], "invalid_value", "the Fault menu")
    app.shot("2-20-fault-menu")
    app.choose("invalid_value", "the Fault menu")
    s = app.wait(lambda s: toolbar_item(s, "Fault: invalid_value") and s["popup"] is None, "Fault: invalid_value", 30)
    if unfolded:
        fold_more(app, "Fault: invalid_value")
    seq = app.seq
    app.key("ctrl+Return")
    s = app.wait(lambda s: not s["active"] and status(s).startswith("✗"), "the run failed", 60, after=seq)
    app.shot("2-20-failed")
    quote = script_quote("2:20", "✗ failed")
    check(shows(status(s), quote), f"the status line reads {status(s)!r}, the script says {quote!r}")
    assert s["fields"]["/amount"]["text"] == "1200" and s["fields"]["/customer_name"]["text"] == "Martinez SA", (
        f"the form does not show the last good run's values: {summary(s)}")
    no_dialog(s)
    unfolded = behind_more(app, s, "Fault: invalid_value")
    app.open(lambda s: toolbar_item(s, "Fault: invalid_value")["rect"], "", "the Fault menu")
    first = app.choose("", "the Fault menu")  # "choose no fault (the first entry)"
    assert "no fault" in first["text"], first
    s = app.wait(lambda s: toolbar_item(s, "Fault: none") and s["popup"] is None, "Fault: none again", 30)
    if unfolded:
        fold_more(app, "Fault: none")
        s = app.state()

    # -- 2:50 three ways of reading the same stream ------------------------------------------------
    app.key("ctrl+k")
    s = app.wait(lambda s: s["comparing"] and len(s["lanes"]) == 3, "the compare view with three lanes", 30)
    assert [x["mode"] for x in s["lanes"]] == ["naive", "partial", "settled"]
    if not all(empty(x["fields"]) for x in s["lanes"]):
        app.key("ctrl+shift+BackSpace")
        s = app.wait(lambda s: all(empty(x["fields"]) for x in s["lanes"]), "the lanes cleared", 30)
    app.open(lambda s: toolbar_item(s, "30 tokens/s")["rect"], "10 tokens/s", "the speed box")
    app.choose("10 tokens/s", "the speed box")
    s = app.wait(lambda s: toolbar_item(s, "10 tokens/s") and s["popup"] is None, "10 tokens/s", 30)
    app.shot("2-50-compare")
    seq = app.seq
    app.key("ctrl+Return")
    s = app.wait(lambda s: s["active"], "the compare run started", 60, after=seq)
    caught = None
    partial_amounts = set()
    while s["active"]:
        partial_amounts.add(lane(s, "partial")["fields"]["/amount"]["text"])
        if lane(s, "naive")["fields"]["/amount"]["text"] in ("120", "1200"):
            caught = s
            break
        s = app.wait(lambda x: True, "the next state", 60, after=s["seq"])
    assert caught is not None, "the run ended before the naive lane showed an amount"
    if lane(caught, "naive")["fields"]["/amount"]["text"] == "120":
        # each lane has its own connection: partial may be a network event behind naive
        waiting = script_quote("2:50", "waiting for its value")

        def partial_waits(s: dict[str, Any]) -> bool:
            amount = lane(s, "partial")["fields"]["/amount"]
            partial_amounts.add(amount["text"])
            return shows(f"{amount['placeholder']} {amount['marker']}", waiting)

        try:
            caught = app.wait(partial_waits, f"partial's Amount reading {waiting!r}", 3)
        except AssertionError as exc:
            check(False, str(exc))
    app.shot("2-50-caught")
    app.key("Escape")
    check(partial_amounts <= {"", "1200"}, f"partial showed an unsettled Amount: {partial_amounts}")
    s = app.wait(lambda s: not s["active"], "the compare run stopped", 60)
    app.shot("2-50-stopped")
    assert lane(s, "naive")["fields"]["/amount"]["text"] in ("120", "1200"), "naive did not keep what it showed"
    for name_ in ("partial", "settled"):
        assert empty(lane(s, name_)["fields"]), f"{name_} did not go back to empty: {summary(s)}"
    never = "Values shown that were never true"
    for name_ in ("partial", "settled"):
        assert number(metric(s, never, name_)) == 0, f"{name_}: {metric(s, never, name_)}"
    # "To show it again": Clear all lanes, and Undo puts the cleared values back
    app.key("ctrl+shift+BackSpace")
    s = app.wait(lambda s: all(empty(x["fields"]) for x in s["lanes"]), "the lanes cleared", 30)
    app.key("ctrl+z")
    s = app.wait(lambda s: lane(s, "naive")["fields"]["/amount"]["text"] in ("120", "1200"), "Undo puts naive's values back", 30)

    # -- 3:50 the scoreboard -----------------------------------------------------------------------
    app.open(lambda s: toolbar_item(s, "10 tokens/s")["rect"], "30 tokens/s", "the speed box")
    app.choose("30 tokens/s", "the speed box")
    s = app.wait(lambda s: toolbar_item(s, "30 tokens/s") and s["popup"] is None, "30 tokens/s", 30)
    seq = app.seq
    app.key("ctrl+Return")
    app.wait(lambda s: s["active"], "the compare run started", 60, after=seq)
    s = app.wait(lambda s: not s["active"] and all(metric(s, "Run ended", m) not in ("", "running…") for m in MODES),
                 "the compare run finished, its figures shown", 120)
    app.shot("3-50-scoreboard")
    no_dialog(s)
    said = int(re.search(r"naive ⚠ (\d+)", script_section("3:50")).group(1))
    check(abs(number(metric(s, never, "naive")) - said) <= 3,
          f"naive's values never true: {metric(s, never, 'naive')}, the script says about {said}")
    for name_ in ("partial", "settled"):
        assert number(metric(s, never, name_)) == 0, f"{name_}: {metric(s, never, name_)}"
    for name_ in MODES:
        assert "committed" in metric(s, "Run ended", name_), metric(s, "Run ended", name_)
        assert re.search(r"\d", metric(s, "First visible value", name_)), metric(s, "First visible value", name_)
        assert re.search(r"\d", metric(s, "All settled", name_)), metric(s, "All settled", name_)
    check(inside(s["metrics"]["rect"], s["window"]["available"]), "the scoreboard is cut by the screen's edge")

    def stale(s: dict[str, Any]) -> dict[str, str]:
        """What the scoreboard and the lanes still say of a run no lane shows (lanes empty)."""
        if not all(empty(x["fields"]) for x in s["lanes"]):
            return {}
        said = {f"scoreboard {m}": metric(s, "Run ended", m) for m in MODES if "committed" in metric(s, "Run ended", m)}
        return said | {x["mode"]: (x["status"] or {}).get("text", "") for x in s["lanes"]
                       if (x["status"] or {}).get("text", "").startswith("✓")}

    def fresh(s: dict[str, Any], after: str) -> None:
        """Lanes emptied by a change show no figures or status of the run before it."""
        try:
            app.wait(lambda s: not stale(s), f"{after}: nothing stale", 10)
        except AssertionError:
            check(False, f"{after}: the lanes are empty but still say {stale(app.state())}")
    named = {"First visible value", "Byte to pixel (p50 / p99)", "All settled", never}  # the rows the script points at
    check(not named & set(s["metrics"]["hidden_rows"]), f"scoreboard rows the script points at are cut: {s['metrics']['hidden_rows']}")

    # -- notes for the presenter: F11 and Esc ---------------------------------------------------------
    app.key("F11")
    s = app.wait(lambda s: s["presenting"], "presentation mode", 30)
    app.shot("notes-presentation")
    check(inside(s["metrics"]["rect"], s["window"]["available"]) and not named & set(s["metrics"]["hidden_rows"]),
          f"presentation mode cuts the scoreboard's figures the script points at (rows {s['metrics']['hidden_rows']})")
    for x in s["lanes"]:
        check(inside(x["rect"], s["window"]["available"]), f"presentation mode cuts lane {x['mode']}")
    app.key("Escape")
    s = app.wait(lambda s: not s["presenting"], "presentation mode left", 30)
    check(not s["actions"]["present"], "View → Presentation mode is still ticked after Esc")

    # -- 4:30 optional: a real model's recording ---------------------------------------------------------
    app.open(lambda s: next(m for m in s["menu_bar"] if m["text"] == "File")["rect"], "Recordings", "the File menu")
    app.choose("Recordings", "the File menu")
    app.choose("Real model: invoice (SmolLM2)", "File → Recordings")
    s = app.wait(lambda s: toolbar_item(s, "1×") and s["popup"] is None, "the speed box reading 1×", 60)
    fresh(s, "a recording loaded")
    app.open(lambda s: toolbar_item(s, "1×")["rect"], "2×", "the speed box")
    app.choose("2×", "the speed box")
    s = app.wait(lambda s: toolbar_item(s, "2×") and s["popup"] is None, "2×", 30)
    seq = app.seq
    app.key("ctrl+Return")
    app.wait(lambda s: s["active"], "the replay started", 60, after=seq)
    s = app.wait(lambda s: not s["active"] and all(metric(s, "Run ended", m) not in ("", "running…") for m in MODES),
                 "the replay finished, its figures shown", 180)
    app.shot("4-30-replay")
    no_dialog(s)
    said = int(re.search(r"naive ⚠ about (\d+)", script_section("4:30")).group(1))
    check(abs(number(metric(s, never, "naive")) - said) <= 5,
          f"naive's values never true in the replay: {metric(s, never, 'naive')}, the script says about {said}")
    for name_ in ("partial", "settled"):
        assert number(metric(s, never, name_)) == 0, f"{name_}: {metric(s, never, name_)}"
    replay = script_quote("4:30", "replay:")
    bar = [w for w in s["status_bar"]["widgets"] if shows(w["text"], replay)]
    assert bar, f"the status bar does not show {replay!r}: {s['status_bar']}"
    check(inside(bar[0]["rect"], s["window"]["available"]), "the replay note is below the screen")
    close = [w for w in s["status_bar"]["widgets"] if f"{w['text']} beside `{replay}`" in script_section("4:30")]
    assert close, f"no {script_section('4:30').split(' beside `')[0][-1]} beside the replay note: {s['status_bar']}"
    app.click(close[0]["rect"])
    s = app.wait(lambda s: not any(shows(w["text"], replay) for w in s["status_bar"]["widgets"]), "the replay ended", 30)
    fresh(s, "the replay ended")
    app.shot("4-30-replay-ended")
