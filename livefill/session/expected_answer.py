"""The right answer of the document shown (`ExpectedAnswer`) and a form's marks against it (`FormMarks`).

Which answer applies, first found: one chosen in the window for this document (File → Expected
answer…, `choose`; `clear` forgets it), else for a document of one's own the `NAME.expected.json`
beside its file (livefill.session.scoring.expected_beside), else a bundled scenario's own
`expected.json` when its document is shown (with its own schema). A file that cannot be used is
refused with one line (InputError) and changes nothing; one beside the document that cannot be
used is said in `problem`. A chosen answer belongs to the document it was chosen for.

`form_marks(form)` is the marks of one form: the `Score` of the run that committed into it
(livefill.session.scoreboard sets it), shown until the form changes — a new run, an edit, a clear
take them away. `field_mark` says what a field widget shows for its pointer: a ✓ or ✗ in words,
and the expected value for its tooltip.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from livefill.errors import InputError
from livefill.extraction.form import FormModel, FormSnapshot, FormUpdate
from livefill.extraction.scenarios import get_scenario
from livefill.observers import Observers
from livefill.session.scoring import FieldScore, Score, Verdict, expected_beside, load_expected
from livefill.session.settings import RunSettings

__all__ = ["Answer", "ExpectedAnswer", "FieldMark", "FormMarks", "field_mark", "form_marks", "shown_value"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer:
    """An expected answer: its `value` (a JSON object), where it comes from in a few words
    (`source`), its file (None: bundled) and whether it was chosen in the window."""

    value: dict[str, Any]
    source: str
    path: str | None = None
    chosen: bool = False


def _document_key(s: RunSettings) -> Hashable:
    return (s.scenario, s.document, s.schema_name)


class ExpectedAnswer:
    """The expected answer of what `settings()` shows (see the module docstring). Subscribers are
    called with no argument when it may have changed (`changed()`: the document shown changed)."""

    def __init__(self, settings: Callable[[], RunSettings]) -> None:
        self._settings = settings
        self._chosen: dict[Hashable, Answer] = {}
        self._beside: dict[str, tuple[float, Answer | str]] = {}  # path -> (mtime, answer or problem)
        self._observers: Observers[None] = Observers()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._observers.subscribe(lambda _event: callback())

    def changed(self) -> None:
        """The document shown (or a file beside it) may have changed: tell the subscribers."""
        self._observers.notify(None)

    @property
    def chosen(self) -> Answer | None:
        """The answer chosen in the window for the document shown (None: none chosen)."""
        return self._chosen.get(_document_key(self._settings()))

    def current(self) -> Answer | None:
        """The expected answer of the document shown now (None: there is none)."""
        s = self._settings()
        chosen = self._chosen.get(_document_key(s))
        if chosen is not None:
            return chosen
        if s.document is not None:
            found = self._beside_file(s)
            return found if isinstance(found, Answer) else None
        scenario = get_scenario(s.scenario)
        if s.schema_name is not None and s.schema_name != scenario.schema_name or not isinstance(scenario.expected, dict):
            return None
        return Answer(value=scenario.expected, source=f"the {scenario.name} scenario's expected answer")

    @property
    def problem(self) -> str | None:
        """Why the file beside the document shown cannot be used (None: it can, or there is none)."""
        s = self._settings()
        if s.document is None or _document_key(s) in self._chosen:
            return None
        found = self._beside_file(s)
        return found if isinstance(found, str) else None

    def choose(self, path: str | Path) -> Answer:
        """Score the document shown against the JSON file `path` from now on; InputError (one
        line) if it cannot be used, and nothing changes."""
        value = load_expected(path)
        answer = Answer(value=value, source=f"{Path(path).name}, chosen", path=str(path), chosen=True)
        self._chosen[_document_key(self._settings())] = answer
        self.changed()
        return answer

    def clear(self) -> bool:
        """Forget the answer chosen for the document shown (False: none was chosen)."""
        if self._chosen.pop(_document_key(self._settings()), None) is None:
            return False
        self.changed()
        return True

    def _beside_file(self, s: RunSettings) -> Answer | str | None:
        if not s.document_path:
            return None
        path = expected_beside(s.document_path)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return None
        known = self._beside.get(str(path))
        if known is None or known[0] != mtime:
            try:
                found: Answer | str = Answer(value=load_expected(path), source=f"{path.name}, beside the document",
                                             path=str(path))
            except InputError as exc:
                found = " ".join(str(exc).split())
            known = self._beside[str(path)] = (mtime, found)
        return known[1]


class FormMarks:
    """The marks of one form: the score of the run that committed into it, until the form changes
    (an update that leaves it exactly as scored, a put-back of what was scored, keeps them)."""

    def __init__(self, form: FormModel) -> None:
        self.score: Score | None = None
        self.fresh = False  # the form shows what the run scored committed (unchanged since)
        self._form = weakref.ref(form)
        self._scored: FormSnapshot | None = None  # the form as it was scored
        self._observers: Observers[None] = Observers()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._observers.subscribe(lambda _event: callback())

    def set(self, score: Score | None) -> None:
        """A run committed into the form: show `score` (None: no marks) until the form next changes."""
        form = self._form()
        self._scored = form.snapshot() if form is not None and not form.running else None
        self.fresh = True
        self._show(score)

    def clear(self) -> None:
        """No marks: the form no longer shows what a run committed."""
        self.fresh = False
        self._show(None)

    def _show(self, score: Score | None) -> None:
        if score is not self.score:
            self.score = score
            self._observers.notify(None)

    def of(self, pointer: str) -> tuple[FieldScore, ...]:
        """The scored fields at `pointer` or under it (a table's cells, a list's items)."""
        if self.score is None:
            return ()
        under = pointer + "/"
        return tuple(f for f in self.score.fields if f.pointer == pointer or f.pointer.startswith(under))

    def _on_form(self, _update: FormUpdate) -> None:
        if not self.fresh:
            return
        form = self._form()
        if form is not None and not form.running and self._scored is not None and form.snapshot() == self._scored:
            return  # still exactly what was scored
        self.clear()  # a new run, an edit, a clear: the marks no longer describe what is shown


_MARKS: weakref.WeakKeyDictionary[FormModel, FormMarks] = weakref.WeakKeyDictionary()


def form_marks(form: FormModel) -> FormMarks:
    """The marks of `form` (made on first use; they live as long as the form)."""
    marks = _MARKS.get(form)
    if marks is None:
        marks = _MARKS[form] = FormMarks(form)
        form.subscribe(marks._on_form)
    return marks


def shown_value(value: Any) -> str:
    """A value for a tooltip: a string as it is, anything else as JSON (1200, false, null)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class FieldMark:
    """What a field shows against the expected answer: `answer` ("right" / "wrong", the QSS
    property), `text` (the mark, in words) and `tip` (the expected value)."""

    answer: str
    text: str
    tip: str


def field_mark(scores: Sequence[FieldScore], pointer: str) -> FieldMark | None:
    """The mark of the field at `pointer` given its scored fields (None: nothing of it is scored)."""
    if not scores:
        return None
    bad = [f for f in scores if f.verdict is not Verdict.RIGHT]
    whole = len(scores) == 1 and scores[0].pointer == pointer
    if whole:
        f = scores[0]
        if f.verdict is Verdict.RIGHT:
            return FieldMark("right", "✓ right", f"Right: the expected answer is {shown_value(f.expected)}")
        got = "missing here" if f.verdict is Verdict.MISSING else f"shown: {shown_value(f.actual)}"
        return FieldMark("wrong", "✗ missing" if f.verdict is Verdict.MISSING else "✗ wrong",
                         f"Expected: {shown_value(f.expected)} ({got})")
    if not bad:
        return FieldMark("right", f"✓ {len(scores)} right", f"All {len(scores)} values as the expected answer has them")
    lines = [f"{f.pointer[len(pointer):] or f.pointer}: expected {shown_value(f.expected)}"
             + (" (missing here)" if f.verdict is Verdict.MISSING else f" (shown: {shown_value(f.actual)})") for f in bad]
    return FieldMark("wrong", f"✗ {len(bad)} of {len(scores)} wrong", "\n".join(lines))
