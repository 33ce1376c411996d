"""One API key in the settings dialog: an entry box, or the masked key with Replace… and Forget.

`KeyField` shows either an empty password box (no key: type one and press Enter or Save) or,
when a key is set, only its masked form and where it comes from ("sk-ant-…a1b2 · kept in the
system keyring") with Replace… and Forget. It holds no key: a typed key leaves through
`submitted(str)` and the box is cleared at once; the dialog sets the store and re-renders the
field with `show_key` / `show_entry`.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

__all__ = ["KeyField"]


class KeyField(QWidget):
    """An API key field (see the module docstring)."""

    submitted = Signal(str)
    forgetRequested = Signal()  # noqa: N815 - Qt signal naming

    def __init__(self, name: str, parent: QWidget | None = None, *, placeholder: str = "paste the key") -> None:
        super().__init__(parent)
        self.setObjectName(f"keyField:{name}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.entry = QLineEdit()
        self.entry.setObjectName("keyEntry")
        self.entry.setEchoMode(QLineEdit.EchoMode.Password)
        self.entry.setPlaceholderText(placeholder)
        self.entry.returnPressed.connect(self._submit)
        self.save_button = QPushButton("Save key")
        self.save_button.setObjectName("keySave")
        self.save_button.clicked.connect(self._submit)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("keyCancel")
        self.cancel_button.clicked.connect(self._cancel)
        self.masked = QLabel()
        self.masked.setObjectName("keyMasked")
        self.replace_button = QPushButton("Replace…")
        self.replace_button.setObjectName("keyReplace")
        self.replace_button.clicked.connect(self._replace)
        self.forget_button = QPushButton("Forget")
        self.forget_button.setObjectName("keyForget")
        self.forget_button.clicked.connect(self.forgetRequested)
        for widget in (self.entry, self.save_button, self.cancel_button, self.masked,
                       self.replace_button, self.forget_button):
            layout.addWidget(widget)
        layout.setStretch(0, 1)
        layout.setStretch(3, 1)
        self._shown: tuple[str, str, bool] | None = None
        self.show_entry()

    @property
    def has_key(self) -> bool:
        """A key is shown (masked)."""
        return self._shown is not None

    def show_key(self, masked: str, where: str, *, forgettable: bool = True) -> None:
        """Show a set key: only `masked` and `where` it comes from, with Replace… and Forget."""
        self._shown = (masked, where, forgettable)
        self.entry.clear()
        self.masked.setText(f"{masked}  ·  {where}")
        self._set_mode(entering=False)

    def show_entry(self) -> None:
        """No key: an empty entry box."""
        self._shown = None
        self.entry.clear()
        self._set_mode(entering=True)

    def text(self) -> str:
        """What the label shows (the masked key and its source), or "" in entry mode."""
        return self.masked.text() if self._shown is not None else ""

    def _set_mode(self, *, entering: bool) -> None:
        self.entry.setVisible(entering)
        self.save_button.setVisible(entering)
        self.cancel_button.setVisible(entering and self._shown is not None)
        self.masked.setVisible(not entering)
        self.replace_button.setVisible(not entering)
        self.forget_button.setVisible(not entering and bool(self._shown and self._shown[2]))

    def _submit(self) -> None:
        secret = self.entry.text()
        self.entry.clear()  # the secret leaves the widget at once
        if secret.strip():
            self.submitted.emit(secret)

    def _replace(self) -> None:
        self._set_mode(entering=True)
        self.entry.setFocus()

    def _cancel(self) -> None:
        self.entry.clear()
        self._set_mode(entering=False)
