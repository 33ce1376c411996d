"""What the app does not do before its first window is shown (each a deferral of launch work).

Each probe runs the real `main()` in its own process and stops it at the window's first `show()`:
by then only the scenario's bundled schema is built, the relay's demo-body model is not, no
application-wide event filter in Python has run for the events of building the window, and the
cyclic garbage collector has not run (it finds nothing there; see livefill.gui.app.main).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

AT_SHOW = """
import gc, os, sys
import livefill.gui.main_window as mw
import livefill.gui.theme as theme
import livefill.widgets.value_tips as value_tips

calls = {{"theme": 0, "tips": 0}}
theme_filter, tips_filter = theme.Theme.eventFilter, value_tips.ValueTips.eventFilter

def counted(key, real):
    def event_filter(self, obj, event):
        calls[key] += 1
        return real(self, obj, event)
    return event_filter

theme.Theme.eventFilter = counted("theme", theme_filter)
value_tips.ValueTips.eventFilter = counted("tips", tips_filter)
built = []
theme_init = theme.Theme.__init__

def theme_made(self, *args, **kwargs):  # the launch puts the style sheet on once the window is built
    built.append((calls["theme"], calls["tips"]))
    theme_init(self, *args, **kwargs)

theme.Theme.__init__ = theme_made

def show(self):
    import livefill.demo.relay_body as dp
    schemas = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("livefill.extraction.schemas."))
    print("schemas:", ",".join(schemas), flush=True)
    print("relay demo body built:", dp.RelayDemoBody.__pydantic_complete__, flush=True)
    print("filter calls while building:", *built[0], flush=True)
    from PySide6.QtWidgets import QApplication
    watched = sum(1 for w in QApplication.instance().allWidgets() if w.property(value_tips._WATCHED))
    print("tips filter calls for the style sheet, per watched widget:", (calls["tips"] - built[0][1]) / max(1, watched), flush=True)
    print("theme filter calls:", calls["theme"], flush=True)
    print("gc runs:", sum(s["collections"] for s in gc.get_stats()) - collections, gc.isenabled(), flush=True)
    os._exit(0)

mw.MainWindow.show = show
from livefill.gui.app import main
collections = sum(s["collections"] for s in gc.get_stats())
main(["--settings-file", {settings!r}, "--history", {history!r}, *{args!r}])
"""


def at_show(tmp_path: Path, *args: str) -> str:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    code = AT_SHOW.format(settings=str(tmp_path / "settings.ini"), history=str(tmp_path / "history.jsonl"), args=list(args))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("args", "schema"), [((), "invoice"), (("--scenario", "weather"), "weather"),
                                              (("--compare", "naive,partial,settled", "--scenario", "catalog"), "catalog")])
def test_only_the_scenarios_schema_is_built_before_the_window_is_shown(tmp_path, args, schema):
    out = at_show(tmp_path, *args)
    assert f"schemas: {schema}\n" in out, out


@pytest.mark.slow
def test_the_relay_body_model_and_the_app_wide_filters_wait_for_the_window(tmp_path):
    out = at_show(tmp_path, "--compare", "naive,partial,settled")
    assert "relay demo body built: False" in out, out
    assert "filter calls while building: 0 0" in out, out  # neither filter ran for the ~15,000 events of the build
    # the style sheet goes on after the build (livefill.gui.launch): the value tips' filter, on the
    # watched widgets only, sees that (a style, font and palette change each), never the build's events
    per_widget = float(out.split("per watched widget: ")[1].split()[0])
    assert per_widget <= 4, out
    assert "theme filter calls: 0" in out, out
    assert "gc runs: 0 False" in out, out


def test_main_turns_automatic_collection_back_on_when_it_returns():
    code = (
        "import gc\n"
        "from livefill.gui.app import main\n"
        "assert gc.isenabled()\n"
        "try:\n    main(['--speed', '-5'])\nexcept SystemExit as exc:\n    assert exc.code == 2\n"
        "print('ok' if gc.isenabled() else 'gc left off')\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ok\n", proc.stdout + proc.stderr


def test_bundled_schemas_are_imported_on_first_lookup():
    code = (
        "import sys\n"
        "from livefill.extraction.schemas import SCHEMAS, schema_model\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('livefill.extraction.schemas.'))\n"
        "assert loaded() == [], loaded()\n"
        "assert 'weather' in SCHEMAS and list(SCHEMAS) == ['invoice', 'weather', 'ticket', 'multilingual', 'catalog']\n"
        "assert loaded() == [], loaded()\n"
        "assert schema_model('ticket').__name__ == 'Ticket' and SCHEMAS['ticket'] is schema_model('ticket')\n"
        "assert loaded() == ['livefill.extraction.schemas.ticket'], loaded()\n"
        "try:\n    SCHEMAS['nope']\nexcept KeyError:\n    pass\nelse:\n    raise AssertionError('no KeyError')\n"
        "assert [m.__name__ for m in SCHEMAS.values()] == ['Invoice', 'WeatherQuery', 'Ticket', 'ContactCard', 'Catalog']\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ok\n", proc.stderr


def test_the_relay_demo_body_is_built_on_first_use():
    code = (
        "import sys\n"
        "import livefill.demo.protocol\n"
        "assert 'pydantic' not in sys.modules, 'the knobs alone load pydantic'\n"
        "import livefill.demo.relay_body as dp\n"
        "assert not dp.RelayDemoBody.__pydantic_complete__\n"
        "knobs = dp.knobs_from_relay_demo({'speed': 5})\n"
        "assert knobs.speed == 5 and dp.RelayDemoBody.__pydantic_complete__\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ok\n", proc.stderr


def test_the_theme_follows_the_palette_without_filtering_every_event(qapp, monkeypatch):
    from PySide6.QtWidgets import QLabel

    from livefill.gui.theme import Theme, dark_palette, light_palette

    seen = []
    monkeypatch.setattr(Theme, "eventFilter", lambda self, obj, event: seen.append(event.type()) or False)
    saved_palette, saved_sheet = qapp.palette(), qapp.styleSheet()
    theme = Theme(qapp, "system")
    try:
        label = QLabel("x")
        label.show()
        qapp.processEvents()
        label.close()
        assert seen == []  # no application-wide filter: widget events never reach the theme
        other = dark_palette() if theme.name == "light" else light_palette()
        before = theme.name
        qapp.setPalette(other)
        assert theme.name != before  # ... and a palette change is still followed
    finally:
        theme.setParent(None)
        theme.deleteLater()
        qapp.setPalette(saved_palette)
        qapp.setStyleSheet(saved_sheet)
