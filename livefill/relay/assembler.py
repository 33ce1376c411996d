"""Rebuild the extracted object from relay records: `RecordAssembler`, for callers that want the value."""

from __future__ import annotations

from typing import Any

from livefill.errors import ProtocolError
from livefill.extraction import pointer as jp
from livefill.relay.records import DeltaRecord, FieldRecord, ItemRecord, RelayRecord

__all__ = ["RecordAssembler"]


class RecordAssembler:
    """Rebuild the extracted object from relay records (start / field / item / delta / complete).

    `value` is the object so far: every field at its pointer (objects made on the way), every
    item at its index in its array. `drafts` holds hybrid-mode prose text by pointer until the
    field settles (then the settled value replaces it). Raises ProtocolError for an item that
    skips an index or a value that lands on top of another.
    """

    def __init__(self) -> None:
        self.value: dict[str, Any] = {}
        self.drafts: dict[str, str] = {}

    def apply(self, record: RelayRecord) -> None:
        if isinstance(record, FieldRecord):
            parent, key = self._parent(record.pointer, create=True)
            if key in parent:
                raise ProtocolError(f"field {record.pointer!r} was set twice")
            parent[key] = record.value
            self.drafts.pop(record.pointer, None)
        elif isinstance(record, ItemRecord):
            parent, key = self._parent(record.pointer, create=True)
            array = parent.setdefault(key, [])
            if not isinstance(array, list):
                raise ProtocolError(f"item for {record.pointer!r}, which holds a non-array")
            if record.index != len(array):
                raise ProtocolError(f"item {record.index} of {record.pointer!r} where {len(array)} was due")
            array.append(record.value)
        elif isinstance(record, DeltaRecord):
            self.drafts[record.pointer] = self.drafts.get(record.pointer, "") + record.text

    def _parent(self, pointer: str, *, create: bool) -> tuple[dict[str, Any], str]:
        tokens = jp.parse_strict(pointer)
        if not tokens:
            raise ProtocolError(f"no place for pointer {pointer!r}")
        node: Any = self.value
        for token in tokens[:-1]:
            if isinstance(node, list):
                raise ProtocolError(f"pointer {pointer!r} goes into an array (items come whole)")
            node = node.setdefault(token, {})
        if not isinstance(node, dict):
            raise ProtocolError(f"pointer {pointer!r} goes into a non-object")
        return node, tokens[-1]
