"""`phase24 run`, the main job: everything this machine can do, step by step. On a GPU lab 00,
the checks and the benchmark; without one, the toolchain report, the kernel builds, the Triton
checks in the interpreter and the last recorded H200 results; on both, the MiniGPT parity report.
A step that fails or crashes is its verdict; the others still run.

On a GPU the MiniGPT report, which needs only the CPU, runs in a process of its own beside the
checks (which leave most of the host's cores idle) and is waited for before the first benchmark,
whose timings it would disturb; its output is shown whole when it ends. Without a GPU every step
runs in turn (a CPU machine's cores are the checks' own)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from phase24.core.layout import Columns, out, say
from phase24.core.provenance import REPO
from phase24.harness.check import short_error


NO_NVCC = ("no nvcc here: skipped the kernels' builds and ptxas reports (scripts/setup.sh "
           "installs NVIDIA's nvcc wheels where pip can reach them)")


def have_nvcc() -> bool:
    from phase24.bridge.nvcc import NvccError, nvcc_path

    try:
        nvcc_path()
    except NvccError:
        return False
    return True


def steps(gpu: bool) -> list[tuple[str, list[str]]]:
    """The steps as (title, argv); without nvcc, no build step (run() says it skipped it)."""
    todo = steps_with_build(gpu)
    return todo if have_nvcc() else [(t, a) for t, a in todo if a[0] != "build"]


MINIGPT = ("MiniGPT parity report (NumPy vs PyTorch, float64)", ["minigpt", "parity"])
BESIDE = {"minigpt"}  # on a GPU, run beside the checks until the first benchmark
MAX_SECONDS_BESIDE = 900


def steps_with_build(gpu: bool) -> list[tuple[str, list[str]]]:
    from phase24.harness.ops import OPERATIONS, get
    from phase24.harness.report import recorded

    todo = [("doctor", ["doctor", "--no-ncu"])]
    if gpu:  # every operation's main implementations checked, then every one timed
        todo += [("hello (lab 00)", ["hello"])] + _build_for_this_gpu() + [MINIGPT]
        for verb in ("check", "bench"):
            for name in OPERATIONS:
                main = list(get(name).main)
                todo += [(f"{verb} {name} ({', '.join(main)})", [verb, name, "--impl", *main])]
        return todo
    todo += [("build every kernel (sm_80, sm_89, sm_90a)", ["build"])]
    todo += _emulated_steps()
    todo += [(f"check {name} (Triton's interpreter)", ["check", name]) for name in OPERATIONS]
    todo += [(f"recorded results ({name})", ["results", name]) for name in OPERATIONS
             if recorded(get(name))]
    return todo + [MINIGPT]


# The CUDA C that runs without a GPU, in the emulator: lab 00, and the solutions of the rungs
# that cross the specification's bar.
SOLUTIONS = REPO / "labs" / "solutions"
EMULATED = {"softmax": "my_softmax_v3.cu", "gemm": "my_gemm_v3.cu"}


def _emulated_steps() -> list[tuple[str, list[str]]]:
    from phase24.emulator.build import compiler

    if compiler() is None:
        return []  # doctor's step says which package installs one
    todo = [("hello (lab 00, emulated on the CPU)", ["hello"])]
    return todo + [(f"check {op} --file {name} (emulated on the CPU)",
                    ["check", op, "--file", str(SOLUTIONS / name)])
                   for op, name in EMULATED.items()]


def _build_for_this_gpu() -> list[tuple[str, list[str]]]:
    """The build step for this GPU's own target, all files at once (else the checks would
    compile them one by one, silently); none where it runs the portable PTX or no kernel."""
    import torch

    from phase24.bridge.nvcc import ARCHS, UnsupportedGpuError, target_for

    if not torch.cuda.is_available():  # asked for a GPU's steps where there is none
        return [("build every kernel", ["build"])]
    try:
        target = target_for(torch.cuda.get_device_capability())
    except UnsupportedGpuError:
        return []  # the check says so for each CUDA rung; torch and Triton still run
    return [(f"build every kernel ({target})", ["build", "--arch", target])] \
        if target in ARCHS else []


def _duration(s: float) -> str:
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {int(s % 60):02d} s"


def run(parser, gpu: bool) -> int:
    """Every step of ``steps(gpu)``, each a command of ``parser``, then a table of every step's
    verdict and time."""
    skipped = "" if gpu else ("no GPU here: skipped lab 00's run, the CUDA checks, the benchmark "
                              "and the profiles")
    if skipped:
        say(skipped[0].upper() + skipped[1:] + " (the recorded H200 results are shown).")
    if not have_nvcc():
        say(NO_NVCC[0].upper() + NO_NVCC[1:] + ".")
        skipped = "; ".join(s for s in (skipped, NO_NVCC) if s)
    done, beside = [], None
    for title, argv in steps(gpu):
        if gpu and argv[0] in BESIDE:
            beside = _Beside(title, argv)
            continue
        if beside and argv[0] == "bench":
            done.append(beside.finish())
            beside = None
        out(f"\n=== {title}: python -m phase24 {' '.join(argv)}")
        t0 = time.monotonic()
        try:
            step = parser.parse_args(argv)
            rc = step.fn(step) or 0
            verdict = "passed" if rc == 0 else f"FAILED (exit {rc})"
        except Exception as err:  # a step that crashes is its verdict; the others still run
            verdict = f"FAILED: {short_error(err)}"
        done.append((title, verdict, _duration(time.monotonic() - t0)))
        out(f"=== {title}: {verdict}")
    if beside:
        done.append(beside.finish())
    out(f"\n=== summary of the main job ({'on ' + _gpu_name() if gpu else 'no GPU here'})")
    cols = Columns(["step", "verdict", "time"], [max(len(t) for t, _, _ in done), 7, 10],
                   right={"time"})
    cols.header()
    for title, verdict, took in done:
        cols.row([title, verdict, took])
    failed = sum(v != "passed" for _, v, _ in done)
    say(f"{len(done) - failed} of {len(done)} steps passed" + (f", {failed} failed" if failed else "")
        + (f"; {skipped}" if skipped else ""))
    return 1 if failed else 0


class _Beside:
    """A step run as ``python -m phase24 ARGV`` in a process of its own, its output kept in a
    temporary file until ``finish`` waits for it and shows it."""

    def __init__(self, title: str, argv: list[str]):
        self.title, self.t0 = title, time.monotonic()
        self.log = tempfile.TemporaryFile("w+")
        out(f"\n=== {title}: python -m phase24 {' '.join(argv)} (started; it runs beside the "
            "checks, and its output follows when it ends)")
        self.proc = subprocess.Popen([sys.executable, "-m", "phase24", *argv], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))

    def finish(self) -> tuple[str, str, str]:
        try:
            rc = self.proc.wait(timeout=max(1.0, MAX_SECONDS_BESIDE - self._took()))
            verdict = "passed" if rc == 0 else f"FAILED (exit {rc})"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            verdict = f"FAILED: not done after {MAX_SECONDS_BESIDE} s"
        took = self._took()
        out(f"\n=== {self.title}: its output")
        self.log.seek(0)
        sys.stdout.write(self.log.read())
        self.log.close()
        out(f"=== {self.title}: {verdict}")
        return self.title + " (beside the checks)", verdict, _duration(took)

    def _took(self) -> float:
        return time.monotonic() - self.t0


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name()
