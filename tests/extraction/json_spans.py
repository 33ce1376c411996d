"""A test oracle independent of livefill/extraction/prefix.py: every JSON Pointer of one JSON document mapped to
the [start, end) span of its value, by recursive descent over json.JSONDecoder.raw_decode."""

from __future__ import annotations

import json

from livefill.extraction import pointer as jp

_WS = " \t\n\r"


def reference_spans(text: str) -> dict[str, tuple[int, int]]:
    spans: dict[str, tuple[int, int]] = {}
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _WS:
            i += 1
        return i

    def value(i: int, pointer: str) -> int:
        i = skip(i)
        start = i
        ch = text[i]
        if ch in "{[":
            close = "}" if ch == "{" else "]"
            i = skip(i + 1)
            index = 0
            while text[i] != close:
                if ch == "{":
                    key, i = decoder.raw_decode(text, skip(i))
                    i = skip(i)
                    assert text[i] == ":"
                    i = value(i + 1, jp.child(pointer, key))
                else:
                    i = value(i, jp.child(pointer, index))
                    index += 1
                i = skip(i)
                if text[i] == ",":
                    i = skip(i + 1)
            i += 1
        else:
            _, i = decoder.raw_decode(text, i)
        spans[pointer] = (start, i)
        return i

    end = skip(value(0, ""))
    if end != len(text):
        raise ValueError(f"trailing data at offset {end}")
    return spans
