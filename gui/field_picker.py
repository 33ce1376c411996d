"""Which field did the user pick? Names the pointer of the field a person pressed on or focused.

`FieldPicker(view)` follows a `livefill.widgets.form_view.FormView` and emits `picked(pointer)`:

- a press on a table cell: the cell's own pointer (`/line_items/0/qty`), from the table view's
  `pressed` signal;
- focus entering a field's editor (a click or Tab into it while no run is active): that field's
  pointer, from the application's `focusChanged` signal;
- a press anywhere else on a field (its label, its marker, an editor disabled during a run; such
  presses are not accepted by the child and reach the field frame): the field's pointer, from an
  event filter on the field frames only.

`close()` removes the filter and disconnects (call it before the view is thrown away: no filter
is left on widgets that are being destroyed). It never consumes an event.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, Signal
from PySide6.QtWidgets import QApplication, QTableView, QWidget

from livefill.widgets.field_base import FieldWidget

__all__ = ["FieldPicker"]


class FieldPicker(QObject):
    """Emits `picked(str)` when the user picks a field of `view` (see the module docstring)."""

    picked = Signal(str)

    def __init__(self, view: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent or view)
        self.view = view
        self._last_stamp = -1
        self._frames: list[FieldWidget] = list(getattr(view, "fields", {}).values())
        self._tables: list[tuple[QTableView, Any]] = []
        for frame in self._frames:
            frame.installEventFilter(self)
            table = getattr(frame, "view", None)
            model = getattr(frame, "model", None)
            if isinstance(table, QTableView) and hasattr(model, "cell_pointer"):
                slot = self._cell_slot(model)
                table.pressed.connect(slot)
                self._tables.append((table, slot))
        app = QApplication.instance()
        self._app = app
        if app is not None:
            app.focusChanged.connect(self._focus_changed)
        self._closed = False

    def close(self) -> None:
        """Stop following the view (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for frame in self._frames:
            try:
                frame.removeEventFilter(self)
            except RuntimeError:  # already gone
                pass
        for table, slot in self._tables:
            try:
                table.pressed.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        if self._app is not None:
            try:
                self._app.focusChanged.disconnect(self._focus_changed)
            except (RuntimeError, TypeError):
                pass
        self._frames = []
        self._tables = []

    def _cell_slot(self, model: Any):  # noqa: ANN202
        def pressed(index: QModelIndex) -> None:
            if index.isValid():
                self.picked.emit(str(model.cell_pointer(index.row(), index.column())))

        return pressed

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.MouseButtonPress and isinstance(obj, FieldWidget):
            stamp = event.timestamp()  # type: ignore[attr-defined]
            if not stamp or stamp != self._last_stamp:  # a nested field's press reaches its group too
                self._last_stamp = stamp
                self.picked.emit(obj.pointer)
        return False

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        node = new
        while node is not None and not isinstance(node, FieldWidget):
            if node is self.view:
                return
            node = node.parentWidget()
        if node is not None and node in self._frames and not isinstance(getattr(node, "view", None), QTableView):
            self.picked.emit(node.pointer)
