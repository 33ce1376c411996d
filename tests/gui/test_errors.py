"""gui/errors.py: a slot's exception reaches the user as a box, redacted; a wrapped slot gets what Qt
passes the slot itself (issue 26: View → Autoplay raised "missing 1 required positional argument:
'checked'" because the wrapper took *args, and PySide6 passes such a slot nothing)."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QWidget

from livefill.gui.errors import ErrorReporter, reporter_for, reporting, show_error
from tests.gui.conftest import arun, error_messages, wait_until


class Owner(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, object]] = []

    @reporting
    def with_checked(self, checked: bool) -> None:
        self.seen.append(("with_checked", checked))

    @reporting
    def without(self) -> None:
        self.seen.append(("without", None))

    @reporting
    def optional(self, _index: int | None = None) -> None:
        self.seen.append(("optional", _index))

    def plain(self, value: object) -> None:
        self.seen.append(("plain", value))

    @reporting
    def failing(self, checked: bool) -> None:
        raise ValueError(f"bad key sk-secret-123 ({checked})")


def _boxes(widget: QWidget) -> list[str]:
    return [box.text() for box in widget.findChildren(QMessageBox, "errorBox")]


def test_a_wrapped_slot_gets_what_qt_passes_the_slot(qapp):
    owner = Owner()
    action = QAction("x", owner)
    action.setCheckable(True)
    got: list[object] = []
    for slot in (owner.with_checked, owner.without, owner.optional, reporting(owner.plain),
                 reporting(lambda checked: got.append(checked)), reporting(lambda _checked=False: got.append("lambda"))):
        action.setChecked(False)
        action.triggered.connect(slot)
        action.trigger()  # triggered(True)
        action.triggered.disconnect(slot)
    assert owner.seen == [("with_checked", True), ("without", None), ("optional", True), ("plain", True)]
    assert got == [True, "lambda"]
    assert _boxes(owner) == []


def test_a_wrapped_slot_keeps_its_signature_for_callers_in_code(qapp):
    owner = Owner()
    owner.without()
    owner.optional()
    owner.optional(_index=3)
    owner.with_checked(checked=False)
    assert owner.seen == [("without", None), ("optional", None), ("optional", 3), ("with_checked", False)]
    assert Owner.with_checked.__name__ == "with_checked" and Owner.with_checked.__wrapped__ is not None


def test_an_exception_is_shown_over_the_slots_window_and_redacted(qapp, capsys):
    owner = Owner()
    reporter = ErrorReporter(owner, lambda text: text.replace("sk-secret-123", "[key]"))
    assert reporter_for(owner) is reporter
    action = QAction("x", owner)
    action.setCheckable(True)
    action.triggered.connect(owner.failing)
    action.trigger()
    assert _boxes(owner) == ["ValueError: bad key [key] (True)"]
    err = capsys.readouterr().err
    assert "[key]" in err and "sk-secret" not in err


def test_without_a_reporter_the_message_is_shown_as_it_is(qapp, capsys):
    owner = Owner()
    owner.failing(True)
    assert _boxes(owner) == ["ValueError: bad key sk-secret-123 (True)"]
    assert "ValueError" in capsys.readouterr().err


def test_a_slot_with_no_object_of_its_own_finds_the_window_that_has_a_reporter(qapp):
    window = QWidget()
    ErrorReporter(window, lambda text: text.replace("secret", "[key]"))
    window.show()
    try:

        def fail(_checked: bool = False) -> None:
            raise RuntimeError("secret")

        reporting(fail)(True)
        assert _boxes(window) == ["RuntimeError: [key]"]
        assert show_error("a secret line", None).text() == "a [key] line"
    finally:
        window.close()
        window.deleteLater()


def test_install_routes_uncaught_exceptions_to_the_window(qapp, monkeypatch, capsys):
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    window = QWidget()
    reporter = ErrorReporter(window, lambda text: text.replace("secret", "[key]"))
    loop = asyncio.new_event_loop()
    try:
        reporter.install(loop)
        loop.call_exception_handler({"message": "x", "exception": KeyError("secret")})
        loop.call_exception_handler({"message": "a secret note"})
        try:
            raise OSError("secret")
        except OSError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        loop.close()
    assert _boxes(window) == ["KeyError: '[key]'", "a [key] note", "OSError: [key]"]
    assert "secret" not in capsys.readouterr().err


def test_view_autoplay_from_the_menu_plays_and_unticking_it_stops(make_window, qloop):
    window = make_window(scenario="weather")

    async def scenario() -> None:
        window.autoplay_action.trigger()  # View → Autoplay, as a click on the menu item does
        await wait_until(lambda: window.autoplay.active or bool(error_messages(window)))
        assert error_messages(window) == []
        assert window.autoplay.active and window.autoplay_action.isChecked()
        window.autoplay_action.trigger()  # unticked: autoplay ends
        await wait_until(lambda: not window.autoplay.active)

    arun(qloop, scenario())
    assert error_messages(window) == []
    assert not window.autoplay_action.isChecked()
