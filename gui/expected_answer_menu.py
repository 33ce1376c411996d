"""File → Expected answer ▸: which right answer the lanes are scored against, chosen or cleared.

The submenu says where the expected answer of the document shown comes from now (a scenario's
own, the `NAME.expected.json` beside the document, one chosen here, or none), "Choose a file…"
opens a file dialog for a JSON file (never a nested event loop) and "Clear the chosen answer"
forgets the one chosen for this document. A file that cannot be used is said in one line (status
bar and run log) and changes nothing. The answer itself is the session's, Qt-free:
`session.scoreboard.expected` (livefill.session.expected_answer).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from livefill.errors import InputError
from livefill.session.expected_answer import ExpectedAnswer

__all__ = ["ExpectedAnswerMenu"]


class ExpectedAnswerMenu:
    """The submenu (see the module docstring); `say(line)` tells the person something."""

    def __init__(self, window: QWidget, expected: ExpectedAnswer, menu: QMenu, say: Callable[[str], None]) -> None:
        self.window = window
        self.expected = expected
        self.say = say
        self.menu = menu.addMenu("Expected answer")
        self.menu.setObjectName("expectedAnswerMenu")
        self.menu.setToolTipsVisible(True)
        self.now_action = QAction("", window)
        self.now_action.setObjectName("expectedAnswerNow")
        self.now_action.setEnabled(False)
        self.choose_action = QAction("Choose a file…", window)
        self.choose_action.setObjectName("chooseExpectedAction")
        self.choose_action.setToolTip("A JSON file with the right answer: each lane's fields are marked right or wrong at commit")
        self.choose_action.triggered.connect(lambda _checked=False: self.ask())
        self.clear_action = QAction("Clear the chosen answer", window)
        self.clear_action.setObjectName("clearExpectedAction")
        self.clear_action.triggered.connect(lambda _checked=False: self.clear())
        for action in (self.now_action, self.choose_action, self.clear_action):
            self.menu.addAction(action)
        self.menu.aboutToShow.connect(self.render)
        self.render()

    def render(self) -> None:
        """Say where the answer comes from now; Clear only while one is chosen."""
        answer = self.expected.current()
        problem = self.expected.problem
        now = answer.source if answer is not None else f"none ({problem})" if problem else "none for this document"
        self.now_action.setText(f"Now: {now}")
        self.clear_action.setEnabled(self.expected.chosen is not None)

    def ask(self) -> QFileDialog:
        """The file dialog for a JSON file (non-modal); choosing one calls `choose`."""
        chosen = self.expected.chosen
        start = str(Path(chosen.path).parent) if chosen is not None and chosen.path else ""
        dialog = QFileDialog(self.window, "Choose the expected answer (JSON)", start, "JSON (*.json);;All files (*)")
        dialog.setObjectName("expectedAnswerDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self.choose(path) if path else None)
        dialog.open()
        return dialog

    def choose(self, path: str | Path) -> bool:
        """Score against the JSON file `path`; False (one line said, nothing changed) if it cannot be used."""
        try:
            answer = self.expected.choose(path)
        except InputError as exc:
            self.say(f"Expected answer not changed: {' '.join(str(exc).split())}")
            return False
        self.say(f"Expected answer: {answer.source}")
        self.render()
        return True

    def clear(self) -> bool:
        """Forget the answer chosen for the document shown."""
        cleared = self.expected.clear()
        if cleared:
            answer = self.expected.current()
            self.say(f"Expected answer: {answer.source if answer is not None else 'none'}")
        self.render()
        return cleared
