"""Benchmark for livefill/extraction/prefix.py. Run: python tests/benchmarks/bench_prefix.py

Measures side by side, in one run, on a realistic extraction document cut into 4-character deltas:
  (a) our incremental parse vs re-parsing the growing buffer per delta with jiter's partial mode
      (~100 KB document) and with partial_json_parser (~10 KB document: it needs minutes at 100 KB)
  (b) our incremental total vs our own one-shot parse of the same text
      (target <= 2.5x at 4-character deltas, <= 2x at 16; issue 13)
  (c) our one-shot parse vs json.loads                                         (aim <= 15x)
  (d) flatness: p99 time of one feed() on a ~1 MB document vs a ~10 KB one    (target <= 3x)
Every figure is the best of a few repeats; each run also reads every change's pointer, as a
consumer would. Not collected by pytest (no timed assertions in tests).
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from livefill.extraction.prefix import Change, PrefixParser, ValueState, _change  # noqa: E402

DELTA = 4

WORDS = (
    "oak walnut linen \"heritage\" cotton stainless steel lamp chair table café naïve "
    "Zürich back\\slash tab\there line\nbreak 50% off — über ½ inch façade 東京 émoji 😀"
).split(" ")


def _sentence(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def extraction(target_bytes: int, seed: int = 7) -> str:
    """A catalogue extraction as a model writes it: nested objects, arrays, strings with
    escapes, ints, floats, exponents, booleans and nulls."""
    rnd = random.Random(seed)
    items = []
    doc = {
        "supplier": "Müller & Söhne \"Möbel\" GmbH",
        "season": "Autumn/Winter 2025",
        "item_count": 0,
        "currency": "EUR",
        "contact": {"name": "Anna Beck", "email": "anna@example.com", "phone": None},
        "items": items,
        "notes": "",
    }
    size = 0
    k = 0
    while size < target_bytes:
        item = {
            "sku": f"SKU-{k:05d}",
            "name": _sentence(rnd, rnd.randint(2, 6)),
            "description": _sentence(rnd, rnd.randint(8, 30)),
            "price": round(rnd.uniform(1, 5000), 2),
            "discount": rnd.choice([0, 0.1, 0.25, -1.5e-3, 2e2]),
            "qty": rnd.randint(1, 500),
            "in_stock": rnd.random() < 0.7,
            "ref": None if rnd.random() < 0.5 else rnd.randint(10**6, 10**9),
            "tags": [rnd.choice(WORDS) for _ in range(rnd.randint(0, 5))],
            "dimensions": {
                "width_cm": round(rnd.uniform(1, 300), 1),
                "height_cm": round(rnd.uniform(1, 300), 1),
                "depth_cm": round(rnd.uniform(1, 300), 1),
            },
        }
        items.append(item)
        size += len(json.dumps(item, ensure_ascii=False)) + 2
        k += 1
    doc["item_count"] = k
    doc["notes"] = _sentence(rnd, 60)
    return json.dumps(doc, ensure_ascii=False)


def deltas(text: str, size: int = DELTA) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ours_incremental(pieces: list[str]) -> None:
    p = PrefixParser()
    for piece in pieces:
        for change in p.feed(piece):
            change.pointer  # noqa: B018  (a consumer reads every pointer)
    p.close()


def ours_one_shot(text: str) -> None:
    p = PrefixParser()
    for change in p.feed(text):
        change.pointer  # noqa: B018
    p.close()


def _stub_machine():
    """The cheapest possible machine: it parses nothing and only builds one Change per call."""
    changes = None
    consumed = 0
    while True:
        text = yield changes
        consumed += len(text)
        changes = [_change("/x", ValueState.PROVISIONAL, text)]  # the parser's own cheapest way


class _Stub:
    """The cheapest possible feed() built as the parser's is (a method around a generator's
    send): the per-call floor."""

    def __init__(self) -> None:
        machine = _stub_machine()
        next(machine)
        self._send = machine.send

    def feed(self, text: str) -> list[Change]:
        return self._send(text)


def stub_incremental(pieces: list[str]) -> None:
    stub = _Stub()
    for piece in pieces:
        for change in stub.feed(piece):
            change.pointer  # noqa: B018


def jiter_reparse(pieces: list[str]) -> None:
    import jiter

    buf = ""
    for piece in pieces:
        buf += piece
        jiter.from_json(buf.encode(), partial_mode="trailing-strings")


def pjp_reparse(pieces: list[str]) -> None:
    import partial_json_parser

    buf = ""
    for piece in pieces:
        buf += piece
        partial_json_parser.loads(buf)


def feed_times(text: str) -> list[float]:
    p = PrefixParser()
    out = []
    clock = time.perf_counter
    for piece in deltas(text):
        t0 = clock()
        for change in p.feed(piece):
            change.pointer  # noqa: B018
        out.append(clock() - t0)
    p.close()
    return out


def p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98]


def race(runs: dict[str, object], rounds: int) -> dict[str, float]:
    """Best time of each callable over `rounds` rounds, run in turn within each round, so that
    a busy machine slows every contestant alike."""
    times: dict[str, float] = {name: float("inf") for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()  # type: ignore[operator]
            times[name] = min(times[name], time.perf_counter() - t0)
    return times


def main() -> None:
    doc100 = extraction(100_000)
    doc10 = extraction(10_000, seed=11)
    doc1m = extraction(1_000_000, seed=13)
    assert json.loads(doc100) and json.loads(doc10) and json.loads(doc1m)
    p100, p100_8, p100_16 = deltas(doc100), deltas(doc100, 8), deltas(doc100, 16)
    p10 = deltas(doc10)
    print(f"python {sys.version.split()[0]}; documents: {len(doc100):,} / {len(doc10):,} / {len(doc1m):,} chars; "
          f"{DELTA}-char deltas ({len(p100):,} for the ~100 KB one); best of interleaved rounds, GC on")

    t = race(
        {
            "inc": lambda: ours_incremental(p100),
            "one": lambda: ours_one_shot(doc100),
            "json": lambda: [json.loads(doc100) for _ in range(10)],
            "inc8": lambda: ours_incremental(p100_8),
            "inc16": lambda: ours_incremental(p100_16),
            "stub": lambda: stub_incremental(p100),
            "inc10": lambda: ours_incremental(p10),
        },
        rounds=7,
    )
    inc100, one100, std100, inc10 = t["inc"], t["one"], t["json"] / 10, t["inc10"]
    jit100 = best(lambda: jiter_reparse(p100), repeats=1)
    pjp10 = best(lambda: pjp_reparse(p10), repeats=1)

    print()
    print("(a) incremental, re-parse per delta vs ours")
    print(f"    ~100 KB: jiter partial re-parse {jit100 * 1e3:9.1f} ms   ours {inc100 * 1e3:7.1f} ms   "
          f"ratio {jit100 / inc100:6.1f}x   (target >= 30x)")
    print(f"    ~10 KB : partial_json_parser    {pjp10 * 1e3:9.1f} ms   ours {inc10 * 1e3:7.1f} ms   "
          f"ratio {pjp10 / inc10:6.1f}x")
    print(f"(b) ours incremental {inc100 * 1e3:.1f} ms vs ours one-shot {one100 * 1e3:.1f} ms   "
          f"ratio {inc100 / one100:.2f}x   (target <= 2.5x)")
    # Context for (b): the same text in longer deltas, and the floor no feed() can go below in
    # CPython -- a stub whose feed() parses nothing and only builds and returns one Change.
    print(f"    context: 8-char deltas {t['inc8'] * 1e3:.1f} ms ({t['inc8'] / one100:.2f}x), "
          f"16-char deltas {t['inc16'] * 1e3:.1f} ms ({t['inc16'] / one100:.2f}x, target <= 2x); a do-nothing feed() "
          f"returning one Change per delta: {t['stub'] * 1e3:.1f} ms ({t['stub'] / one100:.2f}x)")
    print(f"(c) ours one-shot {one100 * 1e3:.1f} ms vs json.loads {std100 * 1e3:.2f} ms   "
          f"ratio {one100 / std100:.1f}x   (aim <= 15x)")

    small = min((feed_times(doc10) for _ in range(5)), key=p99)
    large = min((feed_times(doc1m) for _ in range(2)), key=p99)
    print(f"(d) p99 of one feed(): ~1 MB {p99(large) * 1e6:.2f} us vs ~10 KB {p99(small) * 1e6:.2f} us   "
          f"ratio {p99(large) / p99(small):.2f}x   (target <= 3x; median {statistics.median(large) * 1e6:.2f} / "
          f"{statistics.median(small) * 1e6:.2f} us, max {max(large) * 1e6:.0f} / {max(small) * 1e6:.0f} us)")


if __name__ == "__main__":
    main()
