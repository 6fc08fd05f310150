"""Build many kernel files at once: one nvcc per CPU core, a line on stderr as each finishes.

``python -m phase24 build`` runs it on every kernel file of every operation (the cache's warm-up),
as ``scripts/gpu-session.sh`` does before the steps that use them; each operation says which
files it has and for which targets.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, TextIO

from phase24.bridge.nvcc import Build, cached_build, compile_cu

Job = tuple[Path, str]  # (source, target)


def prebuild(jobs: Iterable[tuple[str | Path, str]], workers: int | None = None,
             out: TextIO | None = None) -> dict[Job, Build | Exception]:
    """Build each (source, target) that is not cached yet, `workers` nvcc processes at a time
    (default: one per CPU core available), printing a line per finished build on `out`
    (default stderr). Returns each job's Build, or the exception its build raised."""
    out = out or sys.stderr
    jobs = list(dict.fromkeys((Path(s).resolve(), target) for s, target in jobs))
    results: dict[Job, Build | Exception] = {}
    todo = []
    for job in jobs:
        build = cached_build(*job)
        if build is None:
            todo.append(job)
        else:
            results[job] = build
    if todo:
        workers = max(1, min(len(todo), workers or len(os.sched_getaffinity(0))))
        print(f"phase24: building {len(todo)} kernel file(s) ({len(jobs) - len(todo)} cached), "
              f"{workers} at a time", file=out, flush=True)
        progress = _Progress(len(todo), out)
        with ThreadPoolExecutor(workers) as pool:
            for job, result in zip(todo, pool.map(progress.build, todo)):
                results[job] = result
    return {job: results[job] for job in jobs}


class _Progress:
    def __init__(self, total: int, out: TextIO):
        self.total, self.out, self.done = total, out, 0
        self._lock = threading.Lock()

    def build(self, job: Job) -> Build | Exception:
        t0 = time.perf_counter()
        try:
            result: Build | Exception = compile_cu(*job)
        except Exception as err:  # reported with its job; the other builds go on
            result = err
        with self._lock:
            self.done += 1
            failed = f": FAILED ({type(result).__name__})" if isinstance(result, Exception) else ""
            print(f"built {self.done}/{self.total} {job[0].name} ({job[1]}) "
                  f"{time.perf_counter() - t0:.1f} s{failed}", file=self.out, flush=True)
        return result
