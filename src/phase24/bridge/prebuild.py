"""Build many kernel files at once: one nvcc per CPU core, a line on stderr as each finishes.

``python -m phase24 build`` runs it on every kernel file of the lab (the cache's warm-up), as
``scripts/gpu-session.sh`` does before the steps that use them.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, TextIO

from phase24.bridge.nvcc import KERNELS_DIR, TARGETS, Build, cached_build, compile_cu

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


def kernel_jobs(targets: Iterable[str], hopper_only: Iterable[str] = ()) -> list[Job]:
    """Every .cu file of the kernels folder for each target; the files named in `hopper_only`
    (thread-block clusters) for sm_90a alone."""
    hopper_only = set(hopper_only)
    return [(src, t) for src in sorted(KERNELS_DIR.glob("*.cu")) for t in targets
            if t == "sm_90a" or src.name not in hopper_only]


def machine_targets() -> list[str]:
    """The targets this machine's GPUs run (every target without a GPU); a GPU older than
    Ampere is skipped with its reason on stderr."""
    import torch

    from phase24.bridge.nvcc import UnsupportedGpuError, target_for

    if not torch.cuda.is_available():
        return list(TARGETS)
    targets = []
    for i in range(torch.cuda.device_count()):
        try:
            targets.append(target_for(torch.cuda.get_device_capability(i),
                                      f"{torch.cuda.get_device_name(i)} (cuda:{i})"))
        except UnsupportedGpuError as err:
            print(f"phase24: {err}", file=sys.stderr)
    return list(dict.fromkeys(targets))
