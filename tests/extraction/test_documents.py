"""livefill/extraction/documents.py: pasted text, .txt/.md/.pdf files, every refusal one line naming the file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from livefill.extraction.documents import (
    CHARS_PER_TOKEN,
    Document,
    DocumentError,
    DocumentTooLarge,
    EmptyDocument,
    EncryptedPDF,
    NoTextLayer,
    NotUTF8,
    UnreadableDocument,
    UnsupportedDocument,
    describe_size,
    document_from_bytes,
    document_from_text,
    estimate_tokens,
    format_bytes,
    load_document,
    token_family,
)
from livefill.errors import InputError, LivefillError


def make_pdf(pages: list[str | None], *, user: str | None = None, owner: str | None = None,
             algorithm: str = "AES-128") -> bytes:
    """A real PDF: each page's text drawn in Helvetica (None: a blank page, no text layer)."""
    writer = PdfWriter()
    for text in pages:
        page = writer.add_blank_page(612, 792)
        if text is None:
            continue
        font = DictionaryObject({
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        })
        fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
        for line in text.split("\n"):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        content = DecodedStreamObject()
        content.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(content)
    if user is not None or owner is not None:
        writer.encrypt(user_password=user or "", owner_password=owner, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refusal(exc_type: type[DocumentError], func, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        func(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message.endswith(".")
    assert isinstance(info.value, InputError) and isinstance(info.value, LivefillError)
    return message


# --- pasted text and text files ---------------------------------------------------------------


def test_pasted_text_is_the_document():
    doc = document_from_text("Invoice 42\r\nTotal: 12.50 EUR\rDue 2026-01-01")
    assert doc.text == "Invoice 42\nTotal: 12.50 EUR\nDue 2026-01-01"  # line ends normalised
    assert doc.name == "Pasted text" and doc.path is None and doc.file_size is None
    assert doc.char_count == len(doc.text) and doc.byte_size == len(doc.text.encode())
    assert doc.pages is None and doc.notes == ()


def test_document_is_frozen_and_computes_its_own_sizes():
    doc = Document(text="größe", name="x")
    assert doc.byte_size == 7 and doc.char_count == 5
    with pytest.raises(AttributeError):
        doc.text = "other"  # type: ignore[misc]


@pytest.mark.parametrize("name", ["notes.txt", "README.md", "LOUD.TXT", "doc.markdown"])
def test_text_files_load_by_suffix(tmp_path, name):
    path = write(tmp_path, name, "# Title\n\nCafé — 12 €\n".encode())
    doc = load_document(path)
    assert doc.text == "# Title\n\nCafé — 12 €\n"
    assert doc.name == name and doc.path == path and doc.file_size == path.stat().st_size


def test_a_utf8_bom_is_dropped(tmp_path):
    doc = load_document(write(tmp_path, "bom.txt", b"\xef\xbb\xbfhello"))
    assert doc.text == "hello"


def test_utf16_with_a_bom_is_read(tmp_path):
    doc = load_document(write(tmp_path, "notepad.txt", "\ufeffDatum: 1.2.2026\r\n".encode("utf-16-le")))
    assert doc.text == "Datum: 1.2.2026\n"


def test_latin1_file_names_the_byte_offset_and_line(tmp_path):
    path = write(tmp_path, "old.txt", "line one\nna\xefve".encode("latin-1"))
    message = refusal(NotUTF8, load_document, path)
    assert message.startswith("old.txt is not UTF-8 text: byte 0xEF at offset 11 (line 2)")
    assert "UTF-8" in message and "save" in message


def test_truncated_utf8_at_the_end(tmp_path):
    path = write(tmp_path, "cut.md", "ok €".encode()[:-1])
    message = refusal(NotUTF8, load_document, path)
    assert "byte 0xE2 at offset 3 (line 1)" in message and "unexpected end of data" in message


def test_binary_disguised_as_text(tmp_path):
    message = refusal(NotUTF8, load_document, write(tmp_path, "blob.txt", b"abc\x00def"))
    assert message.startswith("blob.txt is not a text file")


@pytest.mark.parametrize(("data", "words"), [(b"", "is empty"), (b" \n\t\r\n", "holds only whitespace")])
def test_empty_documents(tmp_path, data, words):
    message = refusal(EmptyDocument, load_document, write(tmp_path, "blank.txt", data))
    assert message.startswith(f"blank.txt {words}")
    assert refusal(EmptyDocument, document_from_text, data.decode()).startswith("Pasted text")


# --- files that are not there, not files, not supported, too large ----------------------------


def test_missing_file(tmp_path):
    message = refusal(UnreadableDocument, load_document, tmp_path / "gone.pdf")
    assert message == f"gone.pdf: no such file in {tmp_path}."


def test_a_folder(tmp_path):
    (tmp_path / "dir.txt").mkdir()
    assert refusal(UnreadableDocument, load_document, tmp_path / "dir.txt") == "dir.txt is a folder, not a file."


@pytest.mark.parametrize(("name", "kind"), [("letter.docx", "a .docx file"), ("Makefile", "a file with no extension")])
def test_unsupported_suffix(tmp_path, name, kind):
    message = refusal(UnsupportedDocument, load_document, write(tmp_path, name, b"text"))
    assert message.startswith(f"{name} is {kind}; livefill opens .txt, .md and .pdf")


def test_permission_denied(tmp_path, monkeypatch):
    path = write(tmp_path, "locked.txt", b"secret")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", denied)
    assert refusal(UnreadableDocument, load_document, path) == "locked.txt cannot be read: permission denied."


def test_other_os_errors_are_named(tmp_path, monkeypatch):
    path = write(tmp_path, "flaky.txt", b"x")

    def broken(self, *args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Path, "open", broken)
    assert refusal(UnreadableDocument, load_document, path) == "flaky.txt cannot be read: Input/output error."


def test_file_over_the_cap_is_refused_before_reading(tmp_path, monkeypatch):
    path = write(tmp_path, "big.txt", b"a" * 2500)
    monkeypatch.setattr(Path, "open", lambda *a, **k: pytest.fail("read a file over the cap"))
    message = refusal(DocumentTooLarge, load_document, path, max_bytes=2000)
    assert message == "big.txt is too large: it is 2.5 KB, and livefill takes documents up to 2.0 KB."


def test_default_cap_is_20_mb(tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(20_000_001)  # sparse: costs no disk
    assert "up to 20.0 MB" in refusal(DocumentTooLarge, load_document, path)


def test_pasted_text_over_the_cap():
    message = refusal(DocumentTooLarge, document_from_text, "é" * 600, max_bytes=1000)
    assert message == "Pasted text is too large: its text is 1.2 KB, and livefill takes documents up to 1.0 KB."


def test_pdf_over_the_cap(tmp_path):
    data = make_pdf(["x" * 80] * 3)
    doc = document_from_bytes(data, name="long.pdf", max_bytes=len(data))
    assert doc.byte_size == 3 * 80 + 2 * 2
    message = refusal(DocumentTooLarge, load_document, write(tmp_path, "long.pdf", data), max_bytes=len(data) - 1)
    assert message.startswith(f"long.pdf is too large: it is {format_bytes(len(data))}")


# --- PDFs -------------------------------------------------------------------------------------


def test_pdf_text_is_extracted_page_by_page(tmp_path):
    path = write(tmp_path, "invoice.pdf", make_pdf(["Invoice 42\nTotal: 12.50 EUR", "Page (two)"]))
    doc = load_document(path)
    assert doc.text == "Invoice 42\nTotal: 12.50 EUR\n\nPage (two)"
    assert doc.pages == 2 and doc.notes == () and doc.name == "invoice.pdf"
    assert doc.file_size == path.stat().st_size and doc.byte_size == len(doc.text.encode())


def test_pdf_suffix_is_case_insensitive(tmp_path):
    assert load_document(write(tmp_path, "SCAN.PDF", make_pdf(["hello"]))).text == "hello"


def test_a_scanned_pdf_says_it_has_no_text_layer(tmp_path):
    message = refusal(NoTextLayer, load_document, write(tmp_path, "scan.pdf", make_pdf([None])))
    assert message == "scan.pdf has no text layer (its one page has no text, as in a scan); run it through OCR or paste its text."
    message = refusal(NoTextLayer, load_document, write(tmp_path, "scan3.pdf", make_pdf([None, None, None])))
    assert "none of its 3 pages has any text" in message


def test_pages_without_text_are_left_out_with_a_note(tmp_path):
    doc = load_document(write(tmp_path, "mixed.pdf", make_pdf(["first", None, "third"])))
    assert doc.text == "first\n\nthird" and doc.pages == 3
    assert doc.notes == ("1 of 3 pages of mixed.pdf had no text layer (scanned?); only pages with text are sent.",)


@pytest.mark.parametrize("algorithm", ["AES-128", "RC4-128", "AES-256"])
def test_a_pdf_with_a_user_password_is_refused(tmp_path, algorithm):
    path = write(tmp_path, "locked.pdf", make_pdf(["Secret total 99"], user="pw", owner="own", algorithm=algorithm))
    message = refusal(EncryptedPDF, load_document, path)
    assert message.startswith("locked.pdf is password-protected")
    assert "Secret" not in message


@pytest.mark.parametrize("algorithm", ["AES-128", "RC4-128"])
def test_a_pdf_with_only_an_owner_password_opens(tmp_path, algorithm):
    path = write(tmp_path, "restricted.pdf", make_pdf(["Total 99"], owner="own", algorithm=algorithm))
    assert load_document(path).text == "Total 99"


@pytest.mark.parametrize("data", [b"%PDF-1.7\ngarbage", b"not a pdf at all", b""])
def test_a_damaged_pdf_is_unreadable(tmp_path, data):
    message = refusal(UnreadableDocument, load_document, write(tmp_path, "broken.pdf", data))
    assert message.startswith("broken.pdf is not a PDF livefill can read (")


def test_a_pdf_with_no_pages(tmp_path):
    out = io.BytesIO()
    PdfWriter().write(out)
    assert refusal(EmptyDocument, load_document, write(tmp_path, "none.pdf", out.getvalue())) == "none.pdf has no pages."


def test_bytes_are_sniffed_for_pdf():
    assert document_from_bytes(make_pdf(["from stdin"])).text == "from stdin"
    doc = document_from_bytes("plain\r\ntext".encode())
    assert doc.text == "plain\ntext" and doc.name == "Standard input" and doc.file_size == 11
    assert document_from_bytes(b"%PDF-looking text", pdf=False).text == "%PDF-looking text"
    assert document_from_bytes(b"A note on the %PDF-1.7 header").text == "A note on the %PDF-1.7 header"
    assert document_from_bytes(b"\n  " + make_pdf(["after blanks"])).text == "after blanks"
    refusal(NotUTF8, document_from_bytes, b"\xff\xfe\x00\xd8", name="pipe")  # lone UTF-16 surrogate


def test_pypdf_warnings_do_not_leak_and_its_log_level_is_restored(tmp_path, caplog):
    import logging

    before = logging.getLogger("pypdf").level
    with caplog.at_level(logging.WARNING):
        refusal(UnreadableDocument, document_from_bytes, b"%PDF-1.4\n1 0 obj\n<<", name="w.pdf")
    assert logging.getLogger("pypdf").level == before
    assert not [record for record in caplog.records if record.name.startswith("pypdf")]


# --- token estimates and the size line --------------------------------------------------------


def test_token_family():
    assert token_family("anthropic") == "anthropic"
    assert token_family("openai-chat") == token_family("openai-responses") == "openai"
    assert token_family("openai-compatible") == token_family("ollama") == token_family(None) == "local"


def test_token_estimates_per_script_and_family():
    latin = "a" * 400
    assert estimate_tokens(latin, "openai") == 100
    assert estimate_tokens(latin, "anthropic") == 115  # 400 / 3.5, rounded up
    assert estimate_tokens("日本語のテキスト", "openai") == 8  # one token per CJK character
    assert estimate_tokens("한국어", "anthropic") == 3
    assert estimate_tokens("Привет", "openai") == 3  # two characters a token for other scripts
    assert estimate_tokens("abcd日本", "openai") == 3
    doc = document_from_text(latin + "日本")
    assert doc.tokens("openai") == 102 and doc.tokens("anthropic") == 117
    assert doc.token_estimate == doc.tokens(None) == 117
    assert set(CHARS_PER_TOKEN) == {"anthropic", "openai", "local"}


def test_describe_size():
    doc = document_from_text("word " * 2460 + "end")  # 12,303 bytes
    assert describe_size(doc, "openai") == "12.3 KB · ≈3,100 tokens"
    assert describe_size(document_from_text("hi"), "openai") == "2 B · ≈1 token"
    assert describe_size(document_from_text("x" * 3996), "openai") == "4.0 KB · ≈999 tokens"


def test_describe_size_of_a_pdf_counts_pages():
    doc = document_from_bytes(make_pdf(["one", "two"]), name="two.pdf")
    assert describe_size(doc) == "8 B · 2 pages · ≈3 tokens"
    assert describe_size(document_from_bytes(make_pdf(["one"]))).endswith("1 page · ≈1 token")


@pytest.mark.parametrize(("size", "shown"), [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 KB"), (12_345, "12.3 KB"), (999_949, "999.9 KB"),
    (999_950, "1.0 MB"), (20_000_000, "20.0 MB"), (3_200_000_000, "3.2 GB"),
])
def test_format_bytes(size, shown):
    assert format_bytes(size) == shown
