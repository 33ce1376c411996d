"""A PDF or a stdin built to cost without bound (issue 27 item 6): bounded time, memory and text."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from pypdf import PdfWriter

from livefill.cli.extract_plan import UsageProblem, read_document
from livefill.extraction import pdf_text
from livefill.extraction.documents import MAX_BYTES, DocumentTooLarge, UnreadableDocument, load_document
from livefill.extraction.pdf_text import PdfRefusal, read_pdf
from tests.extraction.test_documents import make_pdf, write


def test_a_pdf_that_takes_too_long_is_cut_off_with_a_message(tmp_path, monkeypatch):
    data = make_pdf(["Invoice 42"])
    assert read_pdf(data, max_chars=MAX_BYTES, seconds=0.01) == PdfRefusal("too_slow", "0.01")
    monkeypatch.setattr(pdf_text, "PDF_SECONDS", 0.01)
    with pytest.raises(UnreadableDocument, match=r"^slow\.pdf took longer than 0\.01 s to read .* paste its text instead\.$"):
        load_document(write(tmp_path, "slow.pdf", data))


def test_reading_stops_at_the_page_that_passes_the_text_cap(tmp_path):
    page = "\n".join(["x" * 80] * 60)  # ~4.9 K characters of text a page
    data = make_pdf([page] * 40)
    refusal = read_pdf(data, max_chars=12_000)
    assert isinstance(refusal, PdfRefusal) and refusal.kind == "too_large"
    assert 2 * len(page) < refusal.size < 4 * len(page)  # three pages read, not forty
    writer = PdfWriter(clone_from=io.BytesIO(data))
    for each in writer.pages:
        each.compress_content_streams()
    packed = io.BytesIO()
    writer.write(packed)
    small = packed.getvalue()
    assert len(small) < 30_000
    with pytest.raises(DocumentTooLarge) as info:
        load_document(write(tmp_path, "long.pdf", small), max_bytes=30_000)  # the file fits; its text does not
    assert str(info.value).startswith("long.pdf is too large: its text is over ")


def test_the_app_never_loads_pypdf_itself(tmp_path):
    path = write(tmp_path, "one.pdf", make_pdf(["hello"]))
    code = (
        "import sys; from livefill.extraction.documents import load_document;"
        f"assert load_document({str(path)!r}).text == 'hello';"
        "print('pypdf' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


class _Endless:
    """Standard input that never ends: read(n) gives n bytes; read() would never return."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            raise AssertionError("read the whole of an endless stdin")
        self.asked.append(size)
        return b"x" * size


def test_document_from_stdin_reads_one_byte_past_the_cap_then_refuses():
    stdin = _Endless()
    with pytest.raises(UsageProblem, match="too large"):
        read_document("-", stdin)  # type: ignore[arg-type]
    assert stdin.asked == [MAX_BYTES + 1]
