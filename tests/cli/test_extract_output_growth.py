"""`livefill extract`'s output grows with a value's length, not its square (issue 27 item 5)."""

from __future__ import annotations

import io
import json

from pydantic import BaseModel

from livefill.cli.extract_output import REPORT_EVERY_UP_TO, FormWatcher, JsonLines
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.extraction.readers import READERS, ReaderOptions
from livefill.wire.events import ArgsDelta, BlockStop


class Letter(BaseModel):
    title: str = ""
    body: str = ""


def _printed(text: str, piece: int) -> list[dict]:
    form = FormModel(Letter)
    reader = READERS[Mode.PARTIAL](ReaderOptions(), Letter)
    out = io.StringIO()
    sink = JsonLines(out)
    FormWatcher(form, sink.change, clock=lambda: 0.0, t0=0.0)
    form.begin_run()
    for i in range(0, len(text), piece):
        form.apply_many(reader.feed(ArgsDelta(text=text[i : i + piece])))
    form.apply_many(reader.feed(BlockStop()))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_long_string_is_printed_as_it_grows_not_whole_at_every_delta():
    body = "".join(f"line {n:05d} of a long letter. " for n in range(1_400))  # ~42 KB
    text = json.dumps({"title": "Dear Ana", "body": body})
    lines = _printed(text, 32)
    printed = sum(len(json.dumps(line)) for line in lines)
    assert printed < 4 * len(text)  # was ~28 MB: the whole value again at each of ~1,300 deltas
    bodies = [line for line in lines if line["pointer"] == "/body"]
    assert bodies[-1] == {"t_ms": 0, "pointer": "/body", "state": "settled", "value": body}
    provisional = [line["value"] for line in bodies if line["state"] == "provisional"]
    assert all(body.startswith(value) for value in provisional)  # each a true prefix, in order
    assert [len(v) for v in provisional] == sorted(len(v) for v in provisional)
    assert len(provisional) > 10  # it still shows the value growing


def test_a_short_string_is_still_printed_at_every_change():
    text = json.dumps({"title": "Dear Ana, " * 20, "body": ""})  # 200 characters: under the threshold
    assert len("Dear Ana, " * 20) <= REPORT_EVERY_UP_TO
    titles = [line["value"] for line in _printed(text, 4) if line["pointer"] == "/title"]
    assert len(titles) >= 45 and titles[-1] == "Dear Ana, " * 20
