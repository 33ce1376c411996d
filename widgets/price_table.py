"""The settings dialog's price table: per model, a price per million input and output tokens.

`PriceTable` shows a tuple of `livefill.session.prices.Price` (`show_prices`) and owns none: each
edit of a cell reads every row back and emits `pricesEdited(tuple[Price, ...])`, or
`problem(str)` (one line) when a row cannot be a price yet — then nothing is emitted, and the
setting keeps its last value. A row left wholly empty is no price; "Add model" adds one to fill
in, "Remove" takes the selected row away. A price may be written "3", "0.25", "$3" or "0,25".
"""

from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from livefill.session.prices import Price, check_prices

__all__ = ["COLUMNS", "PriceTable", "parse_price"]

COLUMNS = ("Model", "Input / 1M", "Output / 1M")
_MONEY = re.compile(r"[\s$€£¥]")


def parse_price(text: str) -> float:
    """"3", "$3.00", "0,25" -> a number ≥ 0 (ValueError otherwise)."""
    plain = _MONEY.sub("", text)
    if "," in plain and "." not in plain:
        plain = plain.replace(",", ".")
    value = float(plain)  # ValueError for anything else
    if not value >= 0 or value == float("inf"):
        raise ValueError(text)
    return value


class PriceTable(QWidget):
    """The editable price table (see the module docstring)."""

    pricesEdited = Signal(object)  # noqa: N815 - Qt signal naming: tuple[Price, ...]
    problem = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("priceTable")
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("priceRows")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
            self.table.horizontalHeaderItem(column).setToolTip(f"{COLUMNS[column].split()[0]}: the price per million tokens")
        self.table.setWordWrap(False)
        self.table.setMinimumWidth(380)  # room for a model's whole name ("claude-sonnet-5") beside two prices
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setToolTip("What you pay per million tokens, in your currency; a cost is shown only for a model "
                              "priced here (livefill ships no prices)")
        self.add_button = QPushButton("Add model")
        self.add_button.setObjectName("addPrice")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("removePrice")
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self._filling = False
        self._shown: tuple[Price, ...] = ()  # what the rows say, as last shown or emitted
        self.table.itemChanged.connect(lambda _item: self._edited())
        self.add_button.clicked.connect(self.add_row)
        self.remove_button.clicked.connect(self._remove_selected)
        self._fit()

    def show_prices(self, prices: tuple[Price, ...]) -> None:
        """Show `prices` (rows being filled in that are no price yet are kept below them)."""
        if prices == self._shown:  # (a row being filled in stays)
            return
        self._shown = prices
        self._filling = True
        try:
            self.table.setRowCount(0)
            for p in prices:
                self._append((p.model, f"{p.input:g}", f"{p.output:g}"))
        finally:
            self._filling = False
        self._fit()

    def add_row(self) -> None:
        """A new empty row, its model cell being edited."""
        self._filling = True
        try:
            row = self._append(("", "", ""))
        finally:
            self._filling = False
        self._fit()
        self.table.setCurrentCell(row, 0)
        self.table.editItem(self.table.item(row, 0))

    def set_cell(self, row: int, column: int, text: str) -> None:
        """Type `text` into a cell, as a person would (tests, scripts)."""
        self.table.item(row, column).setText(text)

    def prices(self) -> tuple[Price, ...]:
        """The rows as prices; ValueError (one line) naming the first row that is not one."""
        out = []
        for row in range(self.table.rowCount()):
            model, price_in, price_out = (self.table.item(row, c).text().strip() for c in range(len(COLUMNS)))
            if not (model or price_in or price_out):
                continue
            if not model:
                raise ValueError(f"row {row + 1}: which model is this price for?")
            if not (price_in and price_out):
                raise ValueError(f"{model}: give both prices, per million input and per million output tokens")
            try:
                out.append(Price(model, parse_price(price_in), parse_price(price_out)))
            except ValueError:
                raise ValueError(f"{model}: a price is a number ≥ 0, like 3 or 0.25 (got {price_in!r} / {price_out!r})") from None
        return check_prices(out)

    def _append(self, texts: tuple[str, str, str]) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate(texts):
            self.table.setItem(row, column, QTableWidgetItem(text))
        return row

    def _remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()} or {self.table.currentRow()} - {-1}, reverse=True)
        for row in rows:
            self.table.removeRow(row)
        self._fit()
        self._edited()

    def _edited(self) -> None:
        if self._filling:
            return
        try:
            prices = self.prices()
        except ValueError as exc:
            self.problem.emit(str(exc))
            return
        self.problem.emit("")
        if prices != self._shown:
            self._shown = prices
            self.pricesEdited.emit(prices)

    def _fit(self) -> None:
        """Tall enough for every row (at least two), so the dialog does not scroll inside it."""
        rows = max(2, self.table.rowCount())
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + rows * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth())
