"""The window's two views: the single form and the compare view, and the status line over them.

`ViewSwitching` is the part of `livefill.gui.main_window.MainWindow` that shows whichever view the session
is in (`ViewChanged`): it makes the `CompareView` on first use, says every lane's phase in the
status line while comparing (and how many lanes there are, whenever that changes), and writes
each lane's ending to the run log.

Leaving the compare view gives back the single view exactly as it was: entering it remembers the
source / form splitter's sizes (the lanes then take the whole width) and leaving puts them back.
The page not shown in the view stack has an ignored size policy, so the compare view's lanes
never set the single view's minimum width (a stacked layout otherwise asks for the largest
minimum of all its pages, shown or not, and squeezes the source pane).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QSizePolicy, QWidget

from livefill.session.run_status import RunStatus
from livefill.gui.errors import show_error

__all__ = ["ViewSwitching"]


class ViewSwitching:
    """Mixed into the main window (see the module docstring)."""

    compare_view: Any
    _top_sizes: list[int] | None

    def _show_view(self, comparing: bool) -> None:
        if comparing:
            self._ensure_compare()
            if self.stack.currentWidget() is not self.compare_view:
                self._top_sizes = self.top_splitter.sizes()
                self._show_page(self.compare_view)
                total = sum(self._top_sizes) or self.width()
                self.top_splitter.setSizes([0, total])  # the lanes need the width; drag to see the source
        elif self.stack.currentWidget() is not self.form_holder:
            self._show_page(self.form_holder)
            if self._top_sizes:
                self.top_splitter.setSizes(self._top_sizes)
        if self.compare_action.isChecked() != comparing:
            self.compare_action.blockSignals(True)
            self.compare_action.setChecked(comparing)
            self.compare_action.blockSignals(False)
        self._on_active()
        self._sync_docks()
        self._show_status()

    def _show_page(self, page: QWidget) -> None:
        """Show `page` in the view stack; the other pages stop counting in its minimum size."""
        for index in range(self.stack.count()):
            widget = self.stack.widget(index)
            shown = widget is page
            widget.setSizePolicy(QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored,
                                 QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored)
        self.stack.setCurrentWidget(page)
        self.stack.updateGeometry()

    def _show_status(self) -> None:
        if self.comparing:
            lanes = [(lane.title, lane.last_status) for lane in self.compare_view.lanes]
            self.status_line.show_compare(lanes, self.session.last_seed)
        else:
            self.status_line.show_status(self.controller.last_status)

    def _ensure_compare(self) -> None:
        if self.compare_view is not None:
            return
        from livefill.gui.compare_view import CompareView

        view = CompareView(self.session)
        view.statusChanged.connect(self._on_lane_status)
        view.laneFinished.connect(self._on_lane_finished)
        view.activeChanged.connect(self._on_active)
        view.allFinished.connect(self._on_compare_finished)
        view.lanesChanged.connect(self._sync_docks)
        view.lanesChanged.connect(self._show_status)  # "compare · 4 lanes" as soon as one is added
        view.recorderChanged.connect(lambda lane: self.inspector_dock.set_recorder(lane, view.lane(lane).recorder))
        view.fieldPicked.connect(self.show_field_bytes)
        view.notesReady.connect(self._show_status)
        view.error.connect(lambda message: show_error(message, self))
        self.compare_view = view
        view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # until it is shown
        self.stack.addWidget(view)

    def _on_lane_status(self, status: RunStatus) -> None:
        self._show_status()
        self.statusChanged.emit(status)

    def _on_lane_finished(self, lane_name: str, status: RunStatus) -> None:
        if status.phase.final:
            lane = self.compare_view.lane(lane_name)
            self.run_log.add_run(status, lane.run.config.label if lane.run is not None else lane.title)
        self._show_status()

    def _on_compare_finished(self) -> None:
        self._show_status()
        self._update_timeline_note()
        self.runsFinished.emit()
