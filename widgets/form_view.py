"""The form, generated from the schema: one field widget per field, by kind."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QAbstractItemDelegate, QAbstractItemView, QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from livefill.extraction.form import FormModel
from livefill.extraction.schema import FieldKind, FieldSpec
from livefill.widgets.bool_field import BoolField
from livefill.widgets.chips_field import ChipsField
from livefill.widgets.enum_field import EnumField
from livefill.widgets.field_base import FieldWidget
from livefill.widgets.form_signals import FormSignals
from livefill.widgets.group_field import GroupField
from livefill.widgets.number_field import NumberField
from livefill.widgets.prose_field import ProseField
from livefill.widgets.table_field import TableField
from livefill.widgets.text_field import TextField
from livefill.widgets.turn_timer import next_turn_timer

WIDGETS: dict[FieldKind, type[FieldWidget]] = {
    FieldKind.STRING: TextField,
    FieldKind.DATE: TextField,
    FieldKind.PROSE: ProseField,
    FieldKind.NUMBER: NumberField,
    FieldKind.INTEGER: NumberField,
    FieldKind.ENUM: EnumField,
    FieldKind.BOOLEAN: BoolField,
    FieldKind.OBJECT: GroupField,
    FieldKind.TABLE: TableField,
    FieldKind.CHIPS: ChipsField,
}


def widget_for(spec: FieldSpec, form: FormModel, signals: FormSignals) -> FieldWidget:
    """The field widget for `spec` (by its kind)."""
    return WIDGETS[spec.kind](spec, form, signals)


GroupField.factory = widget_for


class FormView(QScrollArea):
    """A scrollable form for `form`; `fields` maps each pointer to its widget."""

    def __init__(self, form: FormModel, parent: QWidget | None = None, *, signals: FormSignals | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("formView")
        self.form = form
        self.signals = signals or FormSignals(form, self)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        inner.setObjectName("formInner")
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(2)
        title = QLabel(form.schema_model.model_config.get("title") or form.schema_model.__name__)
        title.setObjectName("formTitle")
        layout.addWidget(title)
        if not form.marking:
            banner = QLabel(
                "Naive client — incorrect on purpose: it repairs the half-written JSON and shows "
                "fragments as if they were values, with no state and no restore."
            )
            banner.setObjectName("naiveBanner")
            banner.setWordWrap(True)
            layout.addWidget(banner)
        self.fields: dict[str, FieldWidget] = {}
        for spec in form.fields:
            widget = widget_for(spec, form, self.signals)
            layout.addWidget(widget)
            self._register(widget)
        layout.addStretch(1)
        self.setWidget(inner)
        self.setAlignment(Qt.AlignmentFlag.AlignTop)
        # A run scrolls the form (to the table it writes); a restore puts it back where it was.
        self._scrolled_before_run = 0
        self._scroll_back = next_turn_timer(self, self._put_scroll_back)  # once the restored fields are laid out
        self.signals.runningChanged.connect(self._on_running)

    def _on_running(self, running: bool) -> None:
        if running:
            self._scrolled_before_run = self.verticalScrollBar().value()
        elif self.form.restored:
            self._scroll_back.start()

    def _put_scroll_back(self) -> None:
        # the restored fields' heights, now: their layouts, then this area's (a layout request
        # climbs one level per pass), so the scroll range is the restored form's before the value
        # is set (else it is cut to the shorter form's)
        for _ in range(3):
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        self.verticalScrollBar().setValue(self._scrolled_before_run)

    def _register(self, widget: FieldWidget) -> None:
        self.fields[widget.pointer] = widget
        for child in getattr(widget, "children_widgets", ()):
            if isinstance(child, FieldWidget):
                self._register(child)

    def field(self, pointer: str) -> FieldWidget:
        """The widget of the field at `pointer`."""
        return self.fields[pointer]

    def commit_pending_edits(self) -> None:
        """Send every edit still in progress to the form (call before a run snapshots it): the
        fields' editors, and a table cell being edited (its delegate writes it to the model)."""
        if self.form.running:
            return
        for widget in self.fields.values():
            widget.commit_pending_edit()
        for view in self.findChildren(QAbstractItemView):
            if view.state() is not QAbstractItemView.State.EditingState:
                continue
            delegate = view.itemDelegate()
            for editor in view.viewport().children():
                if isinstance(editor, QWidget) and editor.isVisible():
                    delegate.commitData.emit(editor)
                    delegate.closeEditor.emit(editor, QAbstractItemDelegate.EndEditHint.NoHint)

    def detach(self) -> None:
        """Stop following the form model (before this view is thrown away)."""
        self.signals.detach()
