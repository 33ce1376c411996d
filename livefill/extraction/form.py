"""The form model: what the form shows, field by field, and whether each value can be trusted yet.

`FormModel` holds the committed document, the draft a run writes (`begin_run`, `apply_many`,
then `commit` / `restore`), and a `FieldState` and `Origin` per JSON Pointer; observers get a
`FormUpdate` after every change (nothing here knows about Qt). How the two documents, the
states and the snapshots work: docs/notes/form-model.md.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel

from livefill.errors import UsageError
from livefill.extraction import pointer as jp
from livefill.extraction.field_text import shown_text
from livefill.extraction.json_doc import MISSING, delete_at, get_at, same_json, set_at, walk
from livefill.extraction.json_doc import tokens as pointer_tokens
from livefill.extraction.schema import FieldKind, FieldSpec, fields_for
from livefill.observers import Observers

__all__ = ["FieldState", "FormModel", "FormSnapshot", "FormUpdate", "Origin"]

# ---------------------------------------------------------------------------------------------
# States and specs


class FieldState(Enum):
    EMPTY = "empty"  # no value and nothing announced for it
    PENDING = "pending"  # its key has arrived in the stream, no byte of its value yet
    PROVISIONAL = "provisional"  # part of the value has arrived; it may still grow or change
    SETTLED = "settled"  # the byte that ends the value arrived (or the user entered it): final
    INVALID = "invalid"  # the value failed its schema (see the reason)


class Origin(Enum):
    """Where a value came from."""

    USER = "user"  # typed by the person (or loaded as theirs); a run keeps it aside and gives it back
    EXTRACTED = "extracted"  # written by a run from the model's stream


# ---------------------------------------------------------------------------------------------
# The model


@dataclass(frozen=True, slots=True)
class FormUpdate:
    """What changed: `pointers` (their values, states or reasons), or everything when `reset`."""

    pointers: frozenset[str] = frozenset()
    reset: bool = False
    running: bool | None = None  # set when a run began (True) or ended (False) with this update
    settled: bool = False  # a value reached its final state (settled or invalid) with this update


Observer = Callable[[FormUpdate], None]


_FINAL = (FieldState.SETTLED, FieldState.INVALID)


def _copied(value: Any) -> Any:
    """A deep copy of a JSON value: its objects and arrays anew, its scalars as they are (a
    tenth of copy.deepcopy's cost; anything else is deep-copied)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    return copy.deepcopy(value)


@dataclass(slots=True)
class _Entry:  # never changed once in a layer (a new state is a new entry): layers share them
    state: FieldState
    reason: str | None = None
    origin: Origin = Origin.EXTRACTED


@dataclass(slots=True)
class _Layer:
    """A document and the states of its pointers."""

    doc: Any = field(default_factory=dict)
    states: dict[str, _Entry] = field(default_factory=dict)

    def copy(self) -> _Layer:
        return _Layer(_copied(self.doc), dict(self.states))  # entries are replaced, never changed: shared


@dataclass(frozen=True, slots=True)
class FormSnapshot:
    """The committed form at one moment (values, states, marks, origins), for `put_back()`. Two
    snapshots with a committed run between them differ even if that run committed the same values
    (an undo step must not go back over a run's result)."""

    _layer: _Layer
    _annotations: tuple[tuple[str, str], ...]
    _runs_committed: int = 0

    @property
    def document(self) -> Any:
        """A deep copy of the document it holds."""
        return _copied(self._layer.doc)

    @property
    def empty(self) -> bool:
        """True when the form held nothing (no value, no mark)."""
        return not self._layer.doc and not self._layer.states and not self._annotations


class FormModel:
    """Committed values, the draft of the current run, and the state of every field.

    While no run is active the user may edit (`set_value`, `clear_value`, `load`). A run calls
    `begin_run()`, then `apply()` / `apply_many()` for each change, and ends with `commit()`,
    `restore()` or (the naive client) `adopt_draft()`.
    """

    def __init__(self, schema_model: type[BaseModel], *, marking: bool = True) -> None:
        self.schema_model = schema_model
        self.fields: tuple[FieldSpec, ...] = fields_for(schema_model)
        #: False for a client that shows no states (the naive mode): widgets hide their markers.
        self.marking = marking
        self._committed = _Layer()
        self._draft: _Layer | None = None
        self._annotations: dict[str, str] = {}
        self._annotations_before_run: dict[str, str] = {}
        #: True when the last run ended by restore(): the form shows again what it showed before it
        #: (views put their scroll positions back too); False during a run and after any other end.
        self.restored = False
        self._runs_committed = 0  # runs that ended by commit() or adopt_draft(): see FormSnapshot
        self._observers: Observers[FormUpdate] = Observers()
        self._by_template: dict[str, FieldSpec] = {}
        self._spec_cache: dict[str, FieldSpec | None] = {}
        self._index(self.fields, "")

    # -- specs ------------------------------------------------------------------------------

    def _index(self, specs: Iterable[FieldSpec], base: str) -> None:
        for spec in specs:
            template = base + spec.pointer if base else spec.pointer
            self._by_template[template] = spec
            if spec.kind is FieldKind.OBJECT:
                self._index(spec.children, "")
            elif spec.kind is FieldKind.TABLE:
                self._index(spec.children, template + "/*")

    def spec_for(self, pointer: str) -> FieldSpec | None:
        """The spec of the field at `pointer` (array indices map to the table's columns), or None."""
        try:
            return self._spec_cache[pointer]
        except KeyError:
            pass
        spec = self._find_spec(pointer)
        if len(self._spec_cache) < 100_000:
            self._spec_cache[pointer] = spec
        return spec

    def _find_spec(self, pointer: str) -> FieldSpec | None:
        tokens = pointer_tokens(pointer)
        for i, token in enumerate(tokens):
            if token.isdigit():
                parent = self._by_template.get(jp.join(tokens[:i]))
                if parent is not None and parent.kind in (FieldKind.TABLE, FieldKind.CHIPS):
                    tokens[i] = "*"
        template = "".join("/" + (t if t == "*" else jp.escape(t)) for t in tokens)
        spec = self._by_template.get(template)
        if spec is None and tokens and tokens[-1] == "*":
            parent = self._by_template.get(template[:-2])
            if parent is not None and parent.kind is FieldKind.CHIPS:
                kind = parent.item_kind or FieldKind.STRING
                return FieldSpec(pointer=template, name="*", label=parent.label, kind=kind, choices=parent.choices)
        return spec

    # -- reading ----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True between begin_run() and commit()/restore()/adopt_draft()."""
        return self._draft is not None

    @property
    def _shown(self) -> _Layer:
        return self._draft if self._draft is not None else self._committed

    @property
    def committed(self) -> Any:
        """A deep copy of the committed document."""
        return _copied(self._committed.doc)

    @property
    def document(self) -> Any:
        """A deep copy of the document shown now (the draft during a run)."""
        return _copied(self._shown.doc)

    def value(self, pointer: str) -> Any:
        """The value shown at `pointer` (the draft's during a run), or MISSING."""
        return get_at(self._shown.doc, pointer)

    def state(self, pointer: str) -> FieldState:
        """The state of the field at `pointer` (EMPTY when nothing is known about it)."""
        if pointer in self._annotations:
            return FieldState.INVALID
        entry = self._shown.states.get(pointer)
        return entry.state if entry is not None else FieldState.EMPTY

    def reason(self, pointer: str) -> str | None:
        """Why the field at `pointer` is INVALID, else None."""
        if pointer in self._annotations:
            return self._annotations[pointer]
        entry = self._shown.states.get(pointer)
        return entry.reason if entry is not None else None

    def origin(self, pointer: str) -> Origin | None:
        """Where the value shown at `pointer` came from (None: no value there)."""
        entry = self._shown.states.get(pointer)
        if entry is None or entry.state in (FieldState.EMPTY, FieldState.PENDING):
            return None
        return entry.origin

    def origins(self) -> dict[str, Origin]:
        """The origin of every value shown (a snapshot)."""
        return {p: o for p in self._shown.states if (o := self.origin(p)) is not None}

    def display(self, pointer: str) -> str:
        """The text the field at `pointer` shows: its value, with "…" while provisional."""
        value = self.value(pointer)
        provisional = self.marking and value is not MISSING and self.state(pointer) is FieldState.PROVISIONAL
        return shown_text(self.spec_for(pointer), value, provisional=provisional)

    def states(self) -> dict[str, FieldState]:
        """Every pointer with a known state (a snapshot)."""
        out = {p: e.state for p, e in self._shown.states.items()}
        out.update({p: FieldState.INVALID for p in self._annotations})
        return out

    # -- observers --------------------------------------------------------------------------

    def subscribe(self, callback: Observer) -> Callable[[], None]:
        """Call `callback(FormUpdate)` after every change; returns a function that unsubscribes."""
        return self._observers.subscribe(callback)

    def _emit(self, update: FormUpdate) -> None:
        self._observers.notify(update)

    # -- user edits (no run active) ---------------------------------------------------------

    def _require_idle(self, what: str) -> None:
        if self._draft is not None:
            raise UsageError(f"cannot {what} while a run is active")

    def set_value(self, pointer: str, value: Any, *, invalid_reason: str | None = None) -> None:
        """The user entered `value` at `pointer` (SETTLED, or INVALID with `invalid_reason`)."""
        self._require_idle("edit the form")
        if pointer == "":
            raise UsageError("set the whole document with load()")
        set_at(self._committed.doc, pointer, _copied(value), self._container)
        self._annotations.pop(pointer, None)
        changed = self._mark_tree(self._committed, pointer, value, FieldState.SETTLED, origin=Origin.USER)
        if invalid_reason is not None:
            self._committed.states[pointer] = _Entry(FieldState.INVALID, invalid_reason, Origin.USER)
        self._mark_parents(self._committed, pointer, changed, origin=Origin.USER)
        self._emit(FormUpdate(frozenset(changed)))

    def clear_value(self, pointer: str) -> None:
        """The user emptied the field at `pointer`."""
        self._require_idle("edit the form")
        delete_at(self._committed.doc, pointer)
        changed = {p for p in self._committed.states if p == pointer or p.startswith(pointer + "/")}
        for p in changed:
            del self._committed.states[p]
        self._annotations.pop(pointer, None)
        changed.add(pointer)
        self._emit(FormUpdate(frozenset(changed)))

    def load(self, document: Mapping[str, Any], *, origin: Origin = Origin.EXTRACTED) -> None:
        """Replace the committed document wholesale (every value SETTLED, from `origin`)."""
        self._require_idle("load values")
        self._committed = _Layer(_copied(dict(document)), {})
        for p in walk(self._committed.doc, ""):
            self._committed.states[p] = _Entry(FieldState.SETTLED, None, origin)
        self._annotations.clear()
        self._emit(FormUpdate(reset=True))

    def snapshot(self) -> FormSnapshot:
        """The committed form now: values, states, marks and origins (not while a run is active)."""
        self._require_idle("take a snapshot")
        return FormSnapshot(self._committed.copy(), tuple(self._annotations.items()), self._runs_committed)

    def clear(self) -> FormSnapshot:
        """Empty the form (values, states, marks); returns what it held, for `put_back()`."""
        self._require_idle("clear the form")
        before = self.snapshot()
        self._committed = _Layer()
        self._annotations.clear()
        self._emit(FormUpdate(reset=True))
        return before

    def put_back(self, snapshot: FormSnapshot) -> None:
        """Show exactly `snapshot` again (values, states, marks and origins), e.g. to undo a clear."""
        self._require_idle("put values back")
        self._committed = snapshot._layer.copy()
        self._annotations = dict(snapshot._annotations)
        self._emit(FormUpdate(reset=True))

    # -- a run ------------------------------------------------------------------------------

    def begin_run(self) -> None:
        """Start an empty draft over the committed values (which stay aside, untouched)."""
        self._require_idle("begin a run")
        self._draft = _Layer()
        self._annotations_before_run = dict(self._annotations)  # restore() gives them back
        self._annotations.clear()
        self.restored = False
        self._emit(FormUpdate(reset=True, running=True))

    def apply(self, pointer: str, state: FieldState, value: Any = None, reason: str | None = None) -> None:
        """One change from the run into the draft (see `apply_many`)."""
        self.apply_many([(pointer, state, value, reason)] if reason else [(pointer, state, value)])

    def apply_many(self, changes: Iterable[tuple[Any, ...]], *, parent_state: FieldState = FieldState.PROVISIONAL) -> None:
        """Changes `(pointer, state, value[, reason])` from the run, applied in order, one update.

        PENDING and EMPTY remove any value at the pointer (the field shows its placeholder);
        PROVISIONAL / SETTLED / INVALID write `value` there (creating missing parents). A SETTLED
        container marks everything inside it SETTLED too (a relay item arrives whole). A parent
        that had no state yet gets `parent_state` (PROVISIONAL: its end has not arrived; a reader
        that never shows provisional values passes PENDING).
        """
        draft = self._draft
        if draft is None:
            raise UsageError("apply() needs begin_run() first")
        changed: set[str] = set()
        settled = False
        for change in changes:
            pointer, state, value = change[0], change[1], change[2]
            settled = settled or state in _FINAL
            reason = change[3] if len(change) > 3 else None
            if state in (FieldState.PENDING, FieldState.EMPTY):
                if pointer == "":
                    draft.doc = {}
                else:
                    delete_at(draft.doc, pointer)
                draft.states[pointer] = _Entry(state)
                changed.add(pointer)
            else:
                container = isinstance(value, (dict, list))
                previous = get_at(draft.doc, pointer) if container else MISSING
                # A container that settles with exactly what its children settled with (the usual
                # end of an object or array: its closing bracket) keeps the draft's copy, and only
                # what changes state is reported: at the end of a run that is the document's
                # closing bracket over a hundred rows, not the 1,400 values under it again.
                same = state is FieldState.SETTLED and container and bool(value) and same_json(previous, value)
                if not same:
                    copied = _copied(value) if container else value
                    if pointer == "":
                        draft.doc = copied
                    else:
                        set_at(draft.doc, pointer, copied, self._container)
                if state is FieldState.SETTLED and container and value:
                    # a container settles after its children arrived: mark them all settled. States
                    # under it are dropped first only when its content was replaced, not settled.
                    stale = not same and previous is not MISSING and previous != value
                    changed |= self._mark_tree(draft, pointer, value, state, drop_stale=stale, only_changed=same)
                else:
                    draft.states[pointer] = _Entry(state, reason)
                    changed.add(pointer)
                self._mark_parents(draft, pointer, changed, parent_state)
        if changed:
            self._emit(FormUpdate(frozenset(changed), settled=settled))

    def commit(self, value: Any = MISSING) -> None:
        """End the run: `value` (default: the draft) becomes the committed document, all SETTLED."""
        if self._draft is None:
            raise UsageError("commit() needs an active run")
        doc = _copied(self._draft.doc if value is MISSING else value)
        layer = _Layer(doc, dict.fromkeys(walk(doc, ""), _Entry(FieldState.SETTLED)))
        self._committed = layer
        self._draft = None
        self._runs_committed += 1
        self._emit(FormUpdate(reset=True, running=False))

    def restore(self, invalid: Mapping[str, str] | None = None) -> None:
        """End the run without a result: show the committed values, states and marks exactly as
        they were before `begin_run()`.

        `invalid` (for a caller that wants it; a run does not pass it: its error belongs in the
        status, not on the user's restored field) adds INVALID marks with a reason until the next
        run or the user's next edit of that field; the values are not touched.
        """
        if self._draft is None:
            raise UsageError("restore() needs an active run")
        self._draft = None
        self._annotations = {**self._annotations_before_run, **dict(invalid or {})}
        self.restored = True
        self._emit(FormUpdate(reset=True, running=False))

    def adopt_draft(self) -> None:
        """End the run keeping whatever the draft shows as the committed document (naive client)."""
        if self._draft is None:
            raise UsageError("adopt_draft() needs an active run")
        self._committed = self._draft
        self._draft = None
        self._runs_committed += 1
        self._emit(FormUpdate(reset=True, running=False))

    # -- internals --------------------------------------------------------------------------

    def _container(self, pointer: str, next_token: str) -> Any:
        """The empty container a missing parent at `pointer` gets: a list for a table or chips field
        (or a numeric next token), else an object."""
        spec = self.spec_for(pointer) if pointer else None
        if spec is not None:
            return [] if spec.kind in (FieldKind.TABLE, FieldKind.CHIPS) else {}
        return [] if next_token.isdigit() else {}

    def _mark_tree(
        self, layer: _Layer, pointer: str, value: Any, state: FieldState, *, drop_stale: bool = True,
        origin: Origin = Origin.EXTRACTED, only_changed: bool = False,
    ) -> set[str]:
        """Give `value` and everything inside it `state`; the pointers this changes (all of them,
        or with `only_changed` -- the values are the ones shown already -- those whose state does)."""
        changed: set[str] = set()
        if drop_stale:
            prefix = pointer + "/"
            for p in [p for p in layer.states if p.startswith(prefix)]:
                del layer.states[p]
                changed.add(p)
        entry = _Entry(state, None, origin)
        states = layer.states
        for p in walk(value, pointer):
            if only_changed and states.get(p) == entry:
                continue
            states[p] = entry
            changed.add(p)
        return changed

    def _mark_parents(
        self, layer: _Layer, pointer: str, changed: set[str], state: FieldState = FieldState.SETTLED,
        origin: Origin = Origin.EXTRACTED,
    ) -> None:
        """A parent container that had no state yet gets `state` (it has content now)."""
        parent = pointer
        while parent:  # the parents, innermost first, up to the document ("")
            parent = jp.parent(parent)
            entry = layer.states.get(parent)
            if entry is None or entry.state in (FieldState.EMPTY, FieldState.PENDING) and entry.state is not state:
                layer.states[parent] = _Entry(state, None, origin)
                changed.add(parent)
            else:
                break
