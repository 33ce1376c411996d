"""Run a module with its main thread's stack sampled every few ms, written as it goes.

Usage:  python tests/benchmarks/stack_sampler.py OUT.txt -m livefill.gui.app [args...]

A daemon thread writes one line per sample to OUT.txt: the monotonic time, then the main
thread's innermost frames (file:line function, innermost last), `|`-separated. The file is
flushed every 5 samples, so it survives an `os._exit`. bench_launch.py (`--sample`) reads it to
say what the GUI thread was doing while it did not answer.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time
import traceback


def _sample(path: str, interval: float, depth: int) -> None:
    main_id = threading.main_thread().ident
    with open(path, "w", encoding="utf-8") as out:
        n = 0
        while True:
            time.sleep(interval)
            frame = sys._current_frames().get(main_id)  # noqa: SLF001 - a profiler's tool
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)[-depth:]
            out.write(f"{time.monotonic():.4f} " + "|".join(f"{f.filename.rsplit('/', 2)[-2:][-1]}:{f.lineno} {f.name}" for f in stack) + "\n")
            n += 1
            if n % 5 == 0:
                out.flush()


def main() -> None:
    path = sys.argv[1]
    if sys.argv[2] != "-m":
        raise SystemExit(__doc__)
    module = sys.argv[3]
    sys.argv = [module, *sys.argv[4:]]
    sys.path[0] = os.getcwd()  # as `python -m` would have it
    threading.Thread(target=_sample, args=(path, 0.002, 14), daemon=True, name="stack-sampler").start()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
