"""The window's two views: the single form and the compare view, and the status line over them.

`ViewSwitcher` shows whichever view the session is in: it makes the `CompareView` on first use,
says the single run's status in the status line, or every lane's phase while comparing (and how
many lanes there are, whenever that changes), and writes each run's ending to the run log. What
the window does about the lanes (its docks, its own signals) it learns from the switcher's signals.

Leaving the compare view gives back the single view exactly as it was: entering it remembers the
source / form splitter's sizes (the lanes then take the whole width) and leaving puts them back.
The page not shown in the view stack has an ignored size policy, so the compare view's lanes
never set the single view's minimum width (a stacked layout otherwise asks for the largest
minimum of all its pages, shown or not, and squeezes the source pane).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QSizePolicy, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.schema import FieldKind
from livefill.gui.compare_view import CompareView
from livefill.gui.errors import show_error
from livefill.gui.lane import Lane
from livefill.gui.window_body import WindowBody
from livefill.session.run_status import RunStatus
from livefill.session.session import SINGLE, Session
from livefill.widgets.form_view import FormView

__all__ = ["ViewSwitcher"]


class ViewSwitcher(QObject):
    """Shows the single form or the compare view in `body`'s view stack (see the module docstring).

    Signals (of the single form and of every compare lane): `statusChanged(RunStatus)`,
    `activeChanged(bool)`, `runsFinished()` (the single run, or the last lane, ended),
    `lanesChanged()` (compare lanes added or removed), `fieldPicked(str lane, str pointer)`,
    `recorderChanged(str lane, WireRecorder)` (a lane started a run with that recorder).
    """

    statusChanged = Signal(object)  # noqa: N815 - Qt signal naming
    activeChanged = Signal(bool)  # noqa: N815
    runsFinished = Signal()  # noqa: N815
    lanesChanged = Signal()  # noqa: N815
    fieldPicked = Signal(str, str)  # noqa: N815
    recorderChanged = Signal(str, object)  # noqa: N815

    def __init__(self, window: QWidget, session: Session, body: WindowBody, single: Lane, compare_action: QAction) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.body = body
        self.single = single
        self.compare_action = compare_action
        self.compare_view: CompareView | None = None
        self._top_sizes: list[int] | None = None
        single.statusChanged.connect(self._on_single_status)
        single.finished.connect(self._on_single_finished)
        single.statusReset.connect(self.show_status)  # another document, a clear: "ready" again
        single.activeChanged.connect(self.activeChanged)
        single.fieldPicked.connect(self.fieldPicked)
        single.error.connect(lambda message: show_error(message, window))
        single.controller.started.connect(lambda _run: self.recorderChanged.emit(SINGLE, session.single.recorder))

    def show(self, comparing: bool) -> None:
        """Show the compare view (made on first use) or the single form."""
        body = self.body
        if comparing:
            view = self.ensure_compare()
            if body.stack.currentWidget() is not view:
                self._top_sizes = body.top_splitter.sizes()
                self._show_page(view)
                total = sum(self._top_sizes) or self.window.width()
                body.top_splitter.setSizes([0, total])  # the lanes need the width; drag to see the source
        elif body.stack.currentWidget() is not body.form_holder:
            self.single.ensure_form()  # (a window opened in the compare view builds it now)
            self._show_page(body.form_holder)
            if self._top_sizes:
                body.top_splitter.setSizes(self._top_sizes)
        if self.compare_action.isChecked() != comparing:
            self.compare_action.blockSignals(True)
            self.compare_action.setChecked(comparing)
            self.compare_action.blockSignals(False)

    def _show_page(self, page: QWidget) -> None:
        """Show `page` in the view stack; the other pages stop counting in its minimum size."""
        stack = self.body.stack
        for index in range(stack.count()):
            widget = stack.widget(index)
            shown = widget is page
            widget.setSizePolicy(QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored,
                                 QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored)
        stack.setCurrentWidget(page)
        stack.updateGeometry()

    def show_status(self) -> None:
        """The status line: the single run's, or every compare lane's in one line."""
        if self.session.comparing and self.compare_view is not None:
            lanes = [(lane.title, lane.last_status) for lane in self.compare_view.lanes]
            self.body.status_line.show_compare(lanes, self.session.last_seed)
        else:
            self.body.status_line.show_status(self.single.controller.last_status)

    def shown_lanes(self) -> list[Lane]:
        """The lanes on screen: the compare view's, or the single form's."""
        if self.session.comparing and self.compare_view is not None:
            return list(self.compare_view.lanes)
        return [self.single]

    def any_provisional(self) -> bool:
        """True if a field of the forms shown shows a provisional value now (a value with text,
        not just an opened table or group)."""
        return any(
            lane.form_view is not None and any(
                str(w.property("state")) == FieldState.PROVISIONAL.value and w.property("displayValue")
                and w.spec.kind not in (FieldKind.TABLE, FieldKind.OBJECT)
                for w in lane.form_view.fields.values()
            )
            for lane in self.shown_lanes()
        )

    def reveal(self, lane: str, pointer: str) -> None:
        """Scroll lane `lane`'s form (SINGLE: the single form's) to the field at `pointer`."""
        if not pointer:
            return
        view: FormView | None = None
        if lane == SINGLE:
            view = self.single.ensure_form()
        elif self.compare_view is not None:
            try:
                view = self.compare_view.lane(lane).form_view
            except KeyError:
                view = None
        widget = view.fields.get(pointer) if view is not None else None
        if view is not None and widget is not None:
            view.ensureWidgetVisible(widget)

    def ensure_compare(self) -> CompareView:
        """The compare view, made (and added to the view stack) on first use."""
        if self.compare_view is not None:
            return self.compare_view
        view = CompareView(self.session)
        view.statusChanged.connect(self._on_lane_status)
        view.laneFinished.connect(self._on_lane_finished)
        view.activeChanged.connect(self.activeChanged)
        view.allFinished.connect(self._on_compare_finished)
        view.lanesChanged.connect(self.lanesChanged)
        view.lanesChanged.connect(self.show_status)  # "compare · 4 lanes" as soon as one is added
        view.recorderChanged.connect(lambda lane: self.recorderChanged.emit(lane, view.lane(lane).recorder))
        view.fieldPicked.connect(self.fieldPicked)
        view.notesReady.connect(self.show_status)
        view.statusReset.connect(self.show_status)
        view.error.connect(lambda message: show_error(message, self.window))
        self.compare_view = view
        view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # until it is shown
        self.body.stack.addWidget(view)
        if self.window.warmup.idle:  # else once it is (look_for_keys), or when the Lanes menu opens
            view.preset_button.check_live_keys()
        return view

    def look_for_keys(self) -> None:
        """Once the warm-up has chosen the keyring's backend: the Lanes menu's live preset looks for
        the keys (a lookup while the window is built competed with it for the GUI thread)."""
        if self.compare_view is not None and self.window.isVisible():  # (not once the window has closed)
            self.compare_view.preset_button.check_live_keys()

    def _on_single_status(self, status: RunStatus) -> None:
        if not self.session.comparing:
            self.body.status_line.show_status(status)
        self.statusChanged.emit(status)

    def _on_single_finished(self, status: RunStatus) -> None:
        if not self.session.comparing:
            self.body.status_line.show_status(status)
        if status.phase.final:
            run = self.session.single.run
            self.body.run_log.add_run(status, run.config.label if run is not None else "")
        self.runsFinished.emit()

    def _on_lane_status(self, status: RunStatus) -> None:
        self.show_status()
        self.statusChanged.emit(status)

    def _on_lane_finished(self, lane_name: str, status: RunStatus) -> None:
        if status.phase.final and self.compare_view is not None:
            lane = self.compare_view.lane(lane_name)
            self.body.run_log.add_run(status, lane.run.config.label if lane.run is not None else lane.title)
        self.show_status()

    def _on_compare_finished(self) -> None:
        self.show_status()
        self.runsFinished.emit()
