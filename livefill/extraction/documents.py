"""The user's document: pasted text, or a `.txt`, `.md` or `.pdf` file, as the text that is sent.

    doc = load_document("invoice.pdf")          # or document_from_text(pasted) / document_from_bytes(stdin)
    describe_size(doc, "anthropic")             # "12.3 KB · 2 pages · ≈3,500 tokens"
    request = ExtractionRequest(..., document=doc.text)

How this works
--------------
Every way in ends in `_make`, which checks the text (not empty, not over the size cap),
normalises line ends (CRLF and lone CR become LF, so what the source pane shows is what is sent)
and counts the text's characters by script once, so a token estimate for any provider family is a
multiplication, not a second pass over the text.

Text files are decoded strictly: UTF-8 (a leading BOM dropped), or UTF-16 when the file starts
with a UTF-16 BOM (what Windows Notepad writes as "Unicode"). Anything else fails with the byte,
its offset and its line, never with replacement characters in the text. PDFs go through pypdf:
an encrypted PDF opens only if it has no user password (pypdf tries the empty one); pages with
no text layer are counted, and a PDF where no page has text is refused (a scan needs OCR). pypdf
runs in a child process with a deadline, a memory ceiling and the text cap (livefill.extraction.pdf_text).

The token estimate is a documented heuristic, shown with "≈": Latin-script characters (U+0000 to
U+024F: ASCII, accents, punctuation, whitespace) at `CHARS_PER_TOKEN[family]` characters a token
(OpenAI's tokenizers ~4, Anthropic's ~3.5, an unknown local model's 3.5 to stay on the safe side);
CJK characters at one token each; every other script (Cyrillic, Greek, Arabic, Devanagari,
emoji ...) at two characters a token. Real counts differ by 10-20 % either way.

Every failure is a `DocumentError` (a livefill.errors.InputError) whose message is one line naming
the document and, where there is one, what to do about it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from livefill.errors import InputError
from livefill.extraction.pdf_text import PDF_MEMORY, PdfRefusal, read_pdf

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_BYTES",
    "SUPPORTED_SUFFIXES",
    "Document",
    "DocumentError",
    "DocumentTooLarge",
    "EmptyDocument",
    "EncryptedPDF",
    "NoTextLayer",
    "NotUTF8",
    "UnreadableDocument",
    "UnsupportedDocument",
    "describe_size",
    "document_from_bytes",
    "document_from_text",
    "estimate_tokens",
    "format_bytes",
    "load_document",
    "token_family",
]

#: The largest file (and the largest text) livefill takes as a document, in bytes.
MAX_BYTES: int = 20_000_000

#: File name endings livefill opens as documents (compared case-insensitively).
SUPPORTED_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".pdf")

#: Latin-script characters per token, by provider family (see token_family).
CHARS_PER_TOKEN: dict[str, float] = {"anthropic": 3.5, "openai": 4.0, "local": 3.5}

_PDF_MAGIC = b"%PDF-"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

# Han (with radicals, kana, bopomofo, Hangul compatibility jamo, CJK symbols), Hangul jamo and
# syllables, compatibility ideographs and forms, half- and full-width forms, ideograph planes 2-3.
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uffef\U00020000-\U0003ffff]"
)
_NOT_LATIN = re.compile("[^\u0000-\u024f]")


class DocumentError(InputError):
    """A document that cannot be used. `name` is the document's name as shown to the user."""

    def __init__(self, message: str, *, name: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.path = path


class UnreadableDocument(DocumentError):
    """The file is missing, a folder, not permitted, or a PDF pypdf cannot parse."""


class UnsupportedDocument(DocumentError):
    """The file's name does not end in one of SUPPORTED_SUFFIXES."""


class NotUTF8(DocumentError):
    """A text file that is not UTF-8 (nor UTF-16 with a BOM); the message names the bad byte."""


class EncryptedPDF(DocumentError):
    """A PDF that needs a password to open."""


class NoTextLayer(DocumentError):
    """A PDF none of whose pages has text (a scan): it needs OCR first."""


class EmptyDocument(DocumentError):
    """The text is empty or only whitespace."""


class DocumentTooLarge(DocumentError):
    """The file, or its text, is over the size cap."""


@dataclass(frozen=True)
class _ScriptCounts:
    latin: int
    cjk: int
    other: int


@dataclass(frozen=True)
class Document:
    """A document ready to send: its text (line ends normalised to LF) and what is known of it.

    `name` is what the UI shows (a file's name, or "Pasted text"); `path` the file it came from,
    None for pasted or piped text; `file_size` the file's size on disk (None when not from a
    file); `pages` a PDF's page count; `notes` one-line remarks worth showing (pages without text).
    Worked out from the text: `byte_size` its UTF-8 size (what is sent), `char_count`, and
    `token_estimate`, the heuristic token count for an unknown model (`tokens(provider)` gives a
    provider family's own).
    """

    text: str
    name: str
    path: Path | None = None
    file_size: int | None = None
    pages: int | None = None
    notes: tuple[str, ...] = ()
    byte_size: int = field(init=False)
    char_count: int = field(init=False)
    token_estimate: int = field(init=False)
    _counts: _ScriptCounts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        counts = _count_scripts(self.text)
        object.__setattr__(self, "_counts", counts)
        object.__setattr__(self, "byte_size", len(self.text.encode("utf-8", "surrogatepass")))
        object.__setattr__(self, "char_count", len(self.text))
        object.__setattr__(self, "token_estimate", _estimate(counts, "local"))

    def tokens(self, provider: str | None = None) -> int:
        """The heuristic token estimate for `provider` (a provider id or family; None: unknown)."""
        return _estimate(self._counts, token_family(provider))


def token_family(provider: str | None) -> str:
    """The tokenizer family for a provider id: "anthropic", "openai" or "local" (any other server).

    "anthropic*" is Anthropic; "openai-compatible" / "compatible" are other servers; any other
    "openai*" is OpenAI; the family names themselves map to themselves; everything else is local.
    """
    name = (provider or "").lower()
    if name.startswith("anthropic"):
        return "anthropic"
    if name in ("openai-compatible", "compatible"):
        return "local"
    if name.startswith("openai"):
        return "openai"
    return "local"


def estimate_tokens(text: str, provider: str | None = None) -> int:
    """The heuristic token count of `text` for `provider` (see the module comment)."""
    return _estimate(_count_scripts(text), token_family(provider))


def format_bytes(size: int) -> str:
    """A byte count for people, in SI units: "812 B", "12.3 KB", "4.5 MB"."""
    if size < 1000:
        return f"{size} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        value = size / scale
        if round(value, 1) < 1000 or unit == "GB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def describe_size(doc: Document, provider: str | None = None) -> str:
    """The one line shown before Start: "12.3 KB · ≈3,100 tokens" (pages added for a PDF).

    Token counts of 1,000 and over are rounded to two significant figures: the estimate is not
    more precise than that.
    """
    parts = [format_bytes(doc.byte_size)]
    if doc.pages is not None:
        parts.append(f"{doc.pages:,} page" + ("" if doc.pages == 1 else "s"))
    tokens = _round_estimate(doc.tokens(provider))
    parts.append(f"≈{tokens:,} token" + ("" if tokens == 1 else "s"))
    return " · ".join(parts)


def document_from_text(text: str, *, name: str = "Pasted text", max_bytes: int = MAX_BYTES) -> Document:
    """A document from text the user pasted (or typed)."""
    return _make(text, name=name, path=None, max_bytes=max_bytes)


def document_from_bytes(
    data: bytes, *, name: str = "Standard input", pdf: bool | None = None, max_bytes: int = MAX_BYTES
) -> Document:
    """A document from raw bytes (`livefill extract --document -`, a drop without a file).

    `pdf` None sniffs the bytes: a PDF starts with `%PDF-` (after whitespace); anything else is
    decoded as text.
    """
    if len(data) > max_bytes:
        raise DocumentTooLarge(_too_large(name, len(data), max_bytes), name=name)
    is_pdf = data[:1024].lstrip().startswith(_PDF_MAGIC) if pdf is None else pdf
    if is_pdf:
        return _from_pdf(data, name=name, path=None, max_bytes=max_bytes)
    return _make(_decode_text(data, name=name, path=None), name=name, path=None, max_bytes=max_bytes,
                 file_size=len(data))


def load_document(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Document:
    """The document in the file at `path`: a `.txt`, `.md` (`.markdown`) or `.pdf` file."""
    path = Path(path)
    name = path.name or str(path)
    data = _read_file(path, name=name, max_bytes=max_bytes)
    if path.suffix.lower() == ".pdf":
        return _from_pdf(data, name=name, path=path, max_bytes=max_bytes)
    text = _decode_text(data, name=name, path=path)
    return _make(text, name=name, path=path, max_bytes=max_bytes, file_size=len(data))


def _read_file(path: Path, *, name: str, max_bytes: int) -> bytes:
    try:
        if path.is_dir():
            raise UnreadableDocument(f"{name} is a folder, not a file.", name=name, path=path)
        if not path.exists():
            where = str(path.parent) if str(path.parent) not in ("", ".") else "the current folder"
            raise UnreadableDocument(f"{name}: no such file in {where}.", name=name, path=path)
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            kind = f"a {path.suffix} file" if path.suffix else "a file with no extension"
            raise UnsupportedDocument(
                f"{name} is {kind}; livefill opens .txt, .md and .pdf documents (or paste the text).",
                name=name, path=path,
            )
        size = path.stat().st_size
        if size > max_bytes:
            raise DocumentTooLarge(_too_large(name, size, max_bytes), name=name, path=path)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except PermissionError:
        raise UnreadableDocument(f"{name} cannot be read: permission denied.", name=name, path=path) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UnreadableDocument(f"{name} cannot be read: {reason}.", name=name, path=path) from None
    if len(data) > max_bytes:  # the file grew after stat()
        raise DocumentTooLarge(_too_large(name, len(data), max_bytes), name=name, path=path)
    return data


def _decode_text(data: bytes, *, name: str, path: Path | None) -> str:
    if data[:2] in _UTF16_BOMS:
        encoding, shown = "utf-16", "UTF-16"
    else:
        encoding, shown = "utf-8-sig", "UTF-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1]
        raise NotUTF8(
            f"{name} is not {shown} text: byte 0x{bad.hex().upper()} at offset {exc.start:,} (line {line:,}):"
            f" {exc.reason}; save the file as UTF-8 and open it again.",
            name=name, path=path,
        ) from None
    if "\x00" in text:
        offset = text.index("\x00")
        raise NotUTF8(
            f"{name} is not a text file: it holds a NUL character at character {offset:,}.",
            name=name, path=path,
        )
    return text


def _from_pdf(data: bytes, *, name: str, path: Path | None, max_bytes: int) -> Document:
    read = read_pdf(data, max_chars=max_bytes)
    if isinstance(read, PdfRefusal):
        raise _refused(read, name=name, path=path, max_bytes=max_bytes)
    page_texts = read.texts
    if not page_texts:
        raise EmptyDocument(f"{name} has no pages.", name=name, path=path)
    blank = sum(1 for text in page_texts if not text.strip())
    if blank == len(page_texts):
        pages = "its one page has no text" if blank == 1 else f"none of its {blank} pages has any text"
        raise NoTextLayer(
            f"{name} has no text layer ({pages}, as in a scan); run it through OCR or paste its text.",
            name=name, path=path,
        )
    notes = ()
    if blank:
        notes = (
            f"{blank} of {len(page_texts)} pages of {name} had no text layer (scanned?); only pages with text are sent.",
        )
    text = "\n\n".join(page.strip("\n") for page in page_texts if page.strip())
    return _make(text, name=name, path=path, max_bytes=max_bytes, file_size=len(data),
                 pages=len(page_texts), notes=notes)


def _make(
    text: str,
    *,
    name: str,
    path: Path | None,
    max_bytes: int,
    file_size: int | None = None,
    pages: int | None = None,
    notes: tuple[str, ...] = (),
) -> Document:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    byte_size = len(text.encode("utf-8", "surrogatepass"))
    if byte_size > max_bytes:
        raise DocumentTooLarge(_too_large(name, byte_size, max_bytes, of_text=True), name=name, path=path)
    if not text.strip():
        what = "is empty" if not text else "holds only whitespace"
        raise EmptyDocument(f"{name} {what}; there is nothing to extract from.", name=name, path=path)
    return Document(text=text, name=name, path=path, file_size=file_size, pages=pages, notes=notes)


def _count_scripts(text: str) -> _ScriptCounts:
    not_latin = len(_NOT_LATIN.findall(text))
    cjk = len(_CJK.findall(text)) if not_latin else 0
    return _ScriptCounts(latin=len(text) - not_latin, cjk=cjk, other=not_latin - cjk)


def _estimate(counts: _ScriptCounts, family: str) -> int:
    return math.ceil(counts.latin / CHARS_PER_TOKEN[family] + counts.cjk + counts.other / 2)


def _round_estimate(tokens: int) -> int:
    if tokens < 1000:
        return tokens
    scale = 10 ** (len(str(tokens)) - 2)
    return round(tokens / scale) * scale


def _refused(refusal: PdfRefusal, *, name: str, path: Path | None, max_bytes: int) -> DocumentError:
    if refusal.kind == "encrypted":
        message = f"{name} is password-protected; save an unprotected copy (or paste its text) and open that."
        return EncryptedPDF(message, name=name, path=path)
    if refusal.kind == "aes":
        message = f"{name} is encrypted with AES, which needs the 'cryptography' package: pip install cryptography."
        return EncryptedPDF(message, name=name, path=path)
    if refusal.kind == "too_large":
        if refusal.size:
            message = (f"{name} is too large: its text is over {format_bytes(refusal.size)} (reading stopped there), "
                       f"and livefill takes documents up to {format_bytes(max_bytes)}.")
        else:
            message = f"{name} is too large: reading it needs more than {format_bytes(PDF_MEMORY)} of memory."
        return DocumentTooLarge(message, name=name, path=path)
    if refusal.kind == "too_slow":
        message = (f"{name} took longer than {refusal.detail} s to read (it expands to far more than its "
                   "size, or its pages are very complex); paste its text instead.")
        return UnreadableDocument(message, name=name, path=path)
    return UnreadableDocument(f"{name} is not a PDF livefill can read ({refusal.detail}).", name=name, path=path)


def _too_large(name: str, size: int, cap: int, *, of_text: bool = False) -> str:
    what = "its text is" if of_text else "it is"
    return f"{name} is too large: {what} {format_bytes(size)}, and livefill takes documents up to {format_bytes(cap)}."
