"""A PDF's page texts, read in a child process with a deadline, a memory ceiling and a text cap.

A PDF is a program of sorts: a 0.2 MB file can inflate to gigabytes, or make one page's text cost
minutes. `read_pdf(data, max_chars=..)` hands the bytes to `python -m livefill.extraction.pdf_text`
(pypdf runs there only) and waits at most `PDF_SECONDS`; the child stops at the first page that
takes the text past `max_chars` and lives under `PDF_MEMORY` bytes of address space where the
platform allows. What comes back is a `PdfPages` or a `PdfRefusal` naming what went wrong
(`encrypted`, `aes`, `unreadable`, `too_large`, `too_slow` with the seconds in `detail`); livefill.extraction.documents turns
those into messages for the user.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["PDF_MEMORY", "PDF_SECONDS", "PdfPages", "PdfRefusal", "read_pdf"]

#: Seconds a PDF may take to read (starting the child and importing pypdf included).
PDF_SECONDS: float = 30.0

#: Bytes of address space the reading process may use (Linux and macOS).
PDF_MEMORY: int = 2 * 1024**3


@dataclass(frozen=True, slots=True)
class PdfPages:
    """Each page's text, in order."""

    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PdfRefusal:
    """Why the PDF gave no text: `kind` (see the module), `detail` (pypdf's words), `size` (the
    characters of text read before the cap, for `too_large`)."""

    kind: str
    detail: str = ""
    size: int = 0


def read_pdf(data: bytes, *, max_chars: int, seconds: float | None = None) -> PdfPages | PdfRefusal:
    """Read `data` as a PDF in a child process (see the module); `seconds`: PDF_SECONDS."""
    seconds = PDF_SECONDS if seconds is None else seconds
    command = [sys.executable, "-m", "livefill.extraction.pdf_text", str(max_chars)]
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=seconds, check=False)
    except subprocess.TimeoutExpired:  # run() has killed the child
        return PdfRefusal("too_slow", f"{seconds:g}")
    except OSError as exc:
        return PdfRefusal("unreadable", f"cannot start the PDF reader: {exc.strerror or exc}")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        if "MemoryError" in last[0]:
            return PdfRefusal("too_large")
        return PdfRefusal("unreadable", last[0])
    if "texts" in answer:
        return PdfPages(tuple(answer["texts"]))
    return PdfRefusal(answer["kind"], answer.get("detail", ""), answer.get("size", 0))


def _limit_memory() -> None:
    try:
        import resource  # not on Windows: there the deadline and the text cap still hold
    except ImportError:
        return
    resource.setrlimit(resource.RLIMIT_AS, (PDF_MEMORY, PDF_MEMORY))


def _extract(data: bytes, max_chars: int) -> dict[str, object]:
    from pypdf import PasswordType, PdfReader  # the child only: the app never loads pypdf (750 ms)
    from pypdf.errors import DependencyError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # recoverable damage: nothing the user can act on
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            return {"kind": "encrypted"}
        texts: list[str] = []
        size = 0
        for page in reader.pages:
            text = page.extract_text() or ""
            size += len(text)
            if size > max_chars:
                return {"kind": "too_large", "size": size}
            texts.append(text)
        return {"texts": texts}
    except DependencyError:
        return {"kind": "aes"}
    except MemoryError:
        return {"kind": "too_large"}
    except Exception as exc:  # pypdf raises many kinds on a damaged file; all mean "cannot read"
        return {"kind": "unreadable", "detail": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}


def main() -> None:
    """The child: the PDF's bytes on stdin, the text cap in argv[1], one JSON answer on stdout."""
    _limit_memory()
    answer = _extract(sys.stdin.buffer.read(), int(sys.argv[1]))
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
