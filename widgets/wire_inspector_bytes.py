"""The byte view of the wire inspector: raw bytes as they arrived, every read boundary marked.

How this works
--------------
Each read is rendered as text and appended at the end of a read-only QPlainTextEdit, preceded by
a boundary mark (`┃`, coloured) so every network read boundary is visible where it fell; reads
alternate between two background tints. Two renderings, both reversible (`parse_rendered` turns
the view's text back into the exact bytes, marks dropped):

- text: printable ASCII as itself (backslashes included, so JSON escapes read as they are), LF as
  `↵` + a line break, a complete printable UTF-8 character inside one read as itself, every other
  byte as `⟨HH⟩` (CR is `⟨0d⟩`, TAB `⟨09⟩`; a character cut by a read boundary shows up as its bytes
  on both sides of the mark; the view's own glyphs `┃ ↵ ⟨ ⟩` in the data are shown as bytes too);
- hex: every byte as two hex digits and a space, with a line break after each LF byte.

Only the last `view_limit` bytes are kept in the document (older reads are cut from the top in
batches; a burst larger than that skips straight to its tail), so the view costs the same at any
stream speed. `highlight(spans)` maps absolute byte offsets to document positions (re-rendering
only the reads involved) and shows them as extra selections, without touching the document.
Document positions count UTF-16 code units, as Qt does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Sequence

from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

__all__ = ["MARK", "ByteView", "parse_rendered", "render_bytes"]

MARK = "┃"  # drawn before every read: a read boundary
NEWLINE = "↵"  # drawn for an LF byte in text mode, followed by a real line break
OPEN, CLOSE = "⟨", "⟩"  # around the hex of a byte shown as a byte
_RESERVED = {MARK, NEWLINE, OPEN, CLOSE}
_PLAIN = re.compile(rb"[\x20-\x7e]+")  # printable ASCII
_PLAIN_LINES = re.compile(rb"[\x20-\x7e\n]*")  # ... and LF
_SIMPLE = {0x0A: NEWLINE + "\n"}
_HEX = [f"{b:02x} " for b in range(256)]
_ESCAPE = re.compile("⟨([0-9a-f]{2})⟩")


def _utf8_len(lead: int) -> int:
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def render_bytes(data: bytes, mode: str = "text", *, positions: bool = False) -> tuple[str, list[int]]:
    """`data` rendered for the view, and (if `positions`) the document position of each byte.

    The positions list has len(data)+1 entries (UTF-16 units from the start of the rendering).
    """
    if mode == "hex":
        parts = []
        for b in data:
            parts.append(_HEX[b] + ("\n" if b == 0x0A else ""))
        text = "".join(parts)
        if not positions:
            return text, []
        pos, out = 0, [0]
        for b in data:
            pos += 4 if b == 0x0A else 3
            out.append(pos)
        return text, out
    if not positions and _PLAIN_LINES.fullmatch(data):
        return data.decode("ascii").replace("\n", NEWLINE + "\n"), []  # the common case, at C speed
    parts: list[str] = []
    pos_list: list[int] = [0] if positions else []
    pos = 0
    i, n = 0, len(data)
    while i < n:
        m = _PLAIN.match(data, i)
        if m is not None:
            run = m.group().decode("ascii")
            parts.append(run)
            if positions:
                pos_list.extend(range(pos + 1, pos + len(run) + 1))
            pos += len(run)
            i = m.end()
            continue
        b = data[i]
        piece: str | None = None
        width = 1
        if b in _SIMPLE:
            piece = _SIMPLE[b]
        elif b >= 0x80:
            k = _utf8_len(b)
            if k and i + k <= n:
                try:
                    ch = data[i : i + k].decode("utf-8")
                except UnicodeDecodeError:
                    ch = ""
                if ch and ch.isprintable() and ch not in _RESERVED:
                    piece, width = ch, k
        if piece is None:
            piece = f"{OPEN}{b:02x}{CLOSE}"
        parts.append(piece)
        units = _units(piece)
        if positions:
            # every byte of a multi-byte character maps to the character's start; the end after it
            pos_list.extend([pos] * (width - 1))
            pos_list.append(pos + units)
        pos += units
        i += width
    return "".join(parts), pos_list


def parse_rendered(text: str, mode: str = "text") -> bytes:
    """The exact bytes a rendering stands for (boundary marks are ignored)."""
    text = text.replace(MARK, "").replace("\u2029", "\n")
    if mode == "hex":
        return bytes.fromhex(text.replace("\n", " "))
    text = text.replace(NEWLINE + "\n", "\n")
    out = bytearray()
    last = 0
    for m in _ESCAPE.finditer(text):
        out += text[last : m.start()].encode("utf-8")
        out.append(int(m.group(1), 16))
        last = m.end()
    out += text[last:].encode("utf-8")
    return bytes(out)


def _units(text: str) -> int:
    """Length in UTF-16 code units (Qt's document positions)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


class _Rendered:
    __slots__ = ("index", "offset", "size", "start", "length", "data")

    def __init__(self, index: int, offset: int, size: int, start: int, length: int, data: bytes) -> None:
        self.index = index  # the read's index in the recorder
        self.offset = offset  # its first byte's stream offset
        self.size = size  # its bytes
        self.start = start  # document position of its mark, counted since the view was cleared
        self.length = length  # UTF-16 units of mark + rendering
        self.data = data  # kept for highlighting (the view holds at most view_limit of these)


class ByteView(QPlainTextEdit):
    """Read-only view of raw bytes; `append_reads` adds reads, `highlight` marks byte spans."""

    def __init__(self, parent: QWidget | None = None, *, view_limit: int = 256 * 1024) -> None:
        super().__init__(parent)
        self.setObjectName("wireBytes")
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.view_limit = view_limit
        self.mode = "text"
        self._reads: deque[_Rendered] = deque()
        self._starts: list[int] = []  # stream offsets of retained reads (kept up to date; rebuilt if dirty)
        self._starts_dirty = True
        self._bytes = 0  # bytes currently in the document
        self._trimmed = 0  # document units removed from the top since the view was cleared
        self._end = 0  # document units appended since the view was cleared
        self.skipped_bytes = 0  # bytes never rendered or cut from the top (older than the view)
        self._formats = self._make_formats()
        self._highlights: list[QTextEdit.ExtraSelection] = []
        self._selection: list[QTextEdit.ExtraSelection] = []

    # -- content --------------------------------------------------------------------------------

    def clear_view(self) -> None:
        """Empty the view."""
        self.clear()
        self._reads.clear()
        self._starts_dirty = True
        self._bytes = self._trimmed = self._end = 0
        self.skipped_bytes = 0
        self._highlights = []
        self._selection = []

    def set_mode(self, mode: str, reads: Sequence[tuple[int, int, bytes]] = ()) -> None:
        """Switch between "text" and "hex"; re-render `reads` (index, offset, data)."""
        self.mode = mode
        self.clear_view()
        self.append_reads(reads)

    def append_reads(self, reads: Iterable[tuple[int, int, bytes]]) -> None:
        """Append reads (index, offset, data) in order; older content is cut past `view_limit`."""
        batch = list(reads)
        if not batch:
            return
        if self._reads:
            last = self._reads[-1]
            gap = batch[0][1] - (last.offset + last.size)
            if gap:  # reads were dropped before they could be shown: start over, contiguous
                self._drop_all()
                self.skipped_bytes += max(0, gap)
        total = sum(len(d) for _, _, d in batch)
        if total > self.view_limit:
            # a burst bigger than the view: only its tail can stay, so render only that
            keep, kept = [], 0
            for item in reversed(batch):
                if kept >= self.view_limit:
                    break
                keep.append(item)
                kept += len(item[2])
            skipped = total - kept
            batch = keep[::-1]
            self._drop_all()
            self.skipped_bytes += skipped
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        mark_fmt, tints = self._formats["mark"], (self._formats["even"], self._formats["odd"])
        for index, offset, data in batch:
            text, _ = render_bytes(data, self.mode)
            cursor.insertText(MARK, mark_fmt)
            cursor.insertText(text, tints[index % 2])
            length = 1 + _units(text)
            self._reads.append(_Rendered(index, offset, len(data), self._end, length, data))
            self._end += length
            self._bytes += len(data)
        cursor.endEditBlock()
        if not self._starts_dirty:  # a tick appends its reads' offsets, never rebuilds them all
            self._starts.extend(offset for _, offset, _ in batch)
        if self._bytes > self.view_limit * 5 // 4:
            self._trim(self.view_limit)

    def _drop_all(self) -> None:
        self.skipped_bytes += self._bytes
        self.clear()
        self._reads.clear()
        self._trimmed = self._end
        self._bytes = 0
        self._starts_dirty = True

    def _trim(self, limit: int) -> None:
        units = cut = 0
        while self._reads and self._bytes > limit:
            r = self._reads.popleft()
            self._bytes -= r.size
            self.skipped_bytes += r.size
            units += r.length
            cut += 1
        if not self._starts_dirty:
            del self._starts[:cut]
        if units:
            cursor = QTextCursor(self.document())
            cursor.setPosition(0)
            cursor.setPosition(units, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            self._trimmed += units

    # -- reading back (tests, copy) -----------------------------------------------------------

    @property
    def first_offset(self) -> int | None:
        """The stream offset of the first byte shown (None when empty)."""
        return self._reads[0].offset if self._reads else None

    def shown_bytes(self) -> bytes:
        """The bytes the document shows, parsed back from its text."""
        return parse_rendered(self.toPlainText(), self.mode)

    def boundary_offsets(self) -> list[int]:
        """The stream offset of every boundary mark in the document, read from its text."""
        text = self.toPlainText().replace("\u2029", "\n")
        base = self.first_offset or 0
        out = []
        pos = 0
        for piece in text.split(MARK)[1:]:
            out.append(base + pos)
            pos += len(parse_rendered(piece, self.mode))
        return out

    # -- highlighting ---------------------------------------------------------------------------

    def doc_range(self, start: int, end: int) -> list[tuple[int, int]]:
        """Document position ranges showing stream bytes [start, end) (only the part shown)."""
        if not self._reads or end <= start:
            return []
        if self._starts_dirty:
            self._starts = [r.offset for r in self._reads]
            self._starts_dirty = False
        out = []
        i = max(0, bisect_right(self._starts, start) - 1)
        while i < len(self._reads):
            r = self._reads[i]
            i += 1
            if r.offset >= end:
                break
            a, b = max(start, r.offset), min(end, r.offset + r.size)
            if a >= b:
                continue
            _, pos = render_bytes(r.data, self.mode, positions=True)
            base = r.start - self._trimmed + 1  # after the mark
            out.append((base + pos[a - r.offset], base + pos[b - r.offset]))
        return out

    def highlight(self, spans: Iterable[tuple[int, int]], *, scroll: bool = True) -> int:
        """Mark the bytes of `spans` (stream offsets) as a field's value; returns pieces shown."""
        self._highlights = self._selections(spans, self._formats["value"])
        self._apply()
        if scroll and self._highlights:
            self._reveal(self._highlights)
        return len(self._highlights)

    def select_span(self, start: int, end: int, *, scroll: bool = True) -> int:
        """Outline stream bytes [start, end) (a selected frame)."""
        self._selection = self._selections([(start, end)], self._formats["frame"])
        self._apply()
        if scroll and self._selection:
            self._reveal(self._selection)
        return len(self._selection)

    def highlighted_ranges(self) -> list[tuple[int, int]]:
        """Document ranges of the current value highlight."""
        return [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in self._highlights]

    def _selections(self, spans: Iterable[tuple[int, int]], fmt: QTextCharFormat) -> list:
        out = []
        doc = self.document()
        for start, end in spans:
            for a, b in self.doc_range(start, end):
                sel = QTextEdit.ExtraSelection()
                cursor = QTextCursor(doc)
                cursor.setPosition(a)
                cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
                sel.cursor = cursor
                sel.format = fmt
                out.append(sel)
        return out

    def _apply(self) -> None:
        self.setExtraSelections(self._selection + self._highlights)

    def _reveal(self, selections: Sequence[QTextEdit.ExtraSelection]) -> None:
        """Scroll so that the lines from the first selection's start to the last one's end are
        whole in the view, centred with the lines around them (the first line at the top when
        they do not fit): never on a line the view's edge cuts in half."""
        start = selections[0].cursor.selectionStart()
        end = max(start, selections[-1].cursor.selectionEnd() - 1)  # its last character's line
        caret = QTextCursor(self.document())
        caret.setPosition(start)
        self.setTextCursor(caret)
        first, last = self._visual_line(start), self._visual_line(end)
        whole = max(1, (self.viewport().height() - 2 * round(self.document().documentMargin()))
                    // max(1, self.fontMetrics().lineSpacing()))
        span = last - first + 1
        top = first - (whole - span) // 2 if span <= whole else first
        bar = self.verticalScrollBar()
        bar.setValue(max(0, min(top, first)))
        end_caret = QTextCursor(self.document())
        end_caret.setPosition(end)
        for _ in range(span):  # a line height off by a pixel: move on while the last line is cut
            if self.cursorRect(end_caret).bottom() < self.viewport().height() or bar.value() >= first:
                break
            bar.setValue(bar.value() + 1)

    def _visual_line(self, position: int) -> int:
        """The wrapped line that holds document `position` (the vertical scroll bar counts these)."""
        block = self.document().findBlock(position)
        line = block.layout().lineForTextPosition(position - block.position())
        return block.firstLineNumber() + (line.lineNumber() if line.isValid() else 0)

    # -- looks ----------------------------------------------------------------------------------

    def _make_formats(self) -> dict[str, QTextCharFormat]:
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        accent = pal.color(QPalette.ColorRole.Highlight)
        dark = base.lightness() < 128

        def blend(a: QColor, b: QColor, k: float) -> QColor:
            return QColor(
                round(a.red() * (1 - k) + b.red() * k),
                round(a.green() * (1 - k) + b.green() * k),
                round(a.blue() * (1 - k) + b.blue() * k),
            )

        mark = QTextCharFormat()
        mark.setForeground(QColor("#e8590c") if not dark else QColor("#ffa94d"))
        mark.setFontWeight(QFont.Weight.Bold)
        even = QTextCharFormat()
        even.setBackground(base)
        odd = QTextCharFormat()
        odd.setBackground(blend(base, accent, 0.12))
        value = QTextCharFormat()
        value.setBackground(QColor(255, 196, 0, 150))
        value.setFontUnderline(True)  # never colour alone
        value.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        value.setFontWeight(QFont.Weight.Bold)
        frame = QTextCharFormat()
        frame.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
        frame.setUnderlineColor(accent)
        frame.setBackground(blend(base, accent, 0.30))
        return {"mark": mark, "even": even, "odd": odd, "value": value, "frame": frame}

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self._formats = self._make_formats()

