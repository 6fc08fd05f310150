"""`phase24 check softmax`: what runs on this machine, the rows as each case ends, a summary.

The cases run in a worker process (harness/isolate.py). Without a GPU, the Triton rungs and a
learner's .py run in Triton's interpreter; CUDA C implementations are skipped, and a learner's
.cu is compiled for three architectures and its exported kernels checked against the ABI.
"""

from __future__ import annotations

import random
from pathlib import Path

import torch

from phase24.harness.layout import WIDTH, Columns, num, out, say, sci

CPU_INSTEAD = ("  python -m phase24 check softmax --impl torch triton   (Triton's interpreter)\n"
               "  python -m phase24 build                              (compile the CUDA kernels)")
INTERPRETER = ("Triton's interpreter runs the Triton kernels on this CPU (the lab chooses it where "
               "there is no GPU;\nnothing to set): it checks what they compute, not their speed.")
DTYPE_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def _not_here(name: str) -> str | None:
    """Why registry implementation ``name`` cannot be checked on this machine (no GPU), or None."""
    if name == "torch":
        return None
    from phase24.softmax.triton_ladder import INTERPRETED, RUNGS

    if name not in RUNGS:
        return "needs a GPU"
    if not INTERPRETED:
        return "needs a GPU, or Triton's interpreter (unset TRITON_INTERPRET=0)"
    x = torch.empty(4, 1000)
    plan = RUNGS[name].plan(x, torch.empty_like(x))
    if plan.note.startswith(f"{name}: ") and all(step.rung != name for step in plan.launches):
        why = plan.note.split("; ")[0].removeprefix(f"{name}: ")
        return f"{why} (here it would run {plan.launches[0].rung}'s kernel)"
    return None


def known(names: list[str] | None) -> list[str]:
    """The implementations named (all by default); SystemExit naming any that is not one."""
    from phase24.softmax import IMPLEMENTATIONS

    unknown = [n for n in names or [] if n not in IMPLEMENTATIONS]
    if unknown:
        raise SystemExit(f"unknown implementation(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(IMPLEMENTATIONS)}")
    return names or list(IMPLEMENTATIONS)


def _registry_subjects(names: list[str] | None, gpu: bool) -> list[str] | None:
    names = known(names)
    if gpu:
        return names
    why = {n: _not_here(n) for n in names}
    for reason in dict.fromkeys(r for r in why.values() if r):
        skipped = [n for n in names if why[n] == reason]
        say(f"{', '.join(skipped)}: {reason}: skipped")
    runnable = [n for n in names if not why[n]]
    if not runnable:
        out("Nothing to check on this machine. What runs here:\n" + CPU_INSTEAD)
        return None
    if any(n != "torch" for n in runnable):
        out(INTERPRETER)
    return runnable


def compile_only(path: Path) -> int:
    """A .cu without a GPU: compile it, print ptxas's report and check the ABI from the cubin."""
    from phase24.bridge.nvcc import NvccError, compile_cu
    from phase24.softmax.learner_cuda import LearnerCudaError, check_abi

    out(f"No GPU here: {path.name} is compiled for sm_80, sm_89 and sm_90a and its kernels are "
        "checked\nagainst the ABI; running it needs an NVIDIA GPU.")
    try:
        builds = [compile_cu(path, arch) for arch in ("sm_80", "sm_89", "sm_90a")]
        for b in builds:
            for k in b.kernels.values():
                out(f"  {b.arch:<7} {k.name}: {k.registers} registers, {k.shared_bytes} B shared, "
                    f"{k.spills} B spilled")
        abi = check_abi(builds[0].image, path.name)
    except (NvccError, LearnerCudaError) as err:
        say(f"FAIL: {err}")
        return 1
    say(f"ABI: {abi.summary()}")
    if abi.problems:
        out("FAIL: fix the kernels named above; the checker cannot grade them.")
        return 1
    out("Compiled. Running it needs an NVIDIA GPU: skipped here.")
    return 0


class Table:
    """The check's rows, printed as each case ends, and its counts."""

    def __init__(self, seed: int):
        self.seed, self.counts, self.failures, self.cols = seed, [0, 0, 0], [], None
        self.noted_failure = False

    def note(self, text: str, failed: bool) -> None:
        say(("FAIL: " if failed else "") + text)
        self.noted_failure |= failed

    def ready(self, jobs) -> None:
        impl = max(len(j[0]) for j in jobs) if jobs else 4
        case = max(len(j[2]) for j in jobs) if jobs else 4
        self.cols = Columns(["impl", "dtype", "case", "rel L2", "err/tol", "sum err", "verdict"],
                            [impl, 5, case, 7, 7, 7, 7], right={"rel L2", "err/tol", "sum err"})
        if jobs:
            self.cols.header()
        else:
            out("no case to run: --case matches no case's name, or the file covers none of "
                "the dtypes asked")

    def verdict(self, k: int, v: dict) -> None:
        if v["na"]:
            word, detail, slot = "n/a", v["why"].removeprefix("SoftmaxArgumentError: "), 2
            detail = "not applicable: " + detail.removeprefix(f"{v['impl']}: ")
        elif v["ok"]:
            word, detail, slot = "ok", "", 0
        else:
            word, detail, slot = "FAIL", v["why"], 1
            if detail.startswith("not run:"):
                word, detail = "not run", ""
            self.failures.append((v["why"], f"{v['impl']} {DTYPE_SHORT.get(v['dtype'])} "
                                            f"{v['case']}"))
        self.counts[slot] += 1
        numbers = ["-"] * 3 if v["na"] or v["rel_l2"] == float("inf") else \
            [sci(v["rel_l2"]), num(v["worst"]), sci(v["row_sum_err"])]
        self.cols.row([v["impl"], DTYPE_SHORT.get(v["dtype"], v["dtype"]), v["case"], *numbers,
                       word], detail)

    def summary(self) -> int:
        """The failures grouped by reason (their rows may have scrolled away), then the counts."""
        passed, failed, na = self.counts
        groups: dict[str, list[str]] = {}
        for why, where in self.failures:
            groups.setdefault(why, []).append(where)
        if len(self.failures) > 1:
            out(f"failed ({len(self.failures)}):")
            for why, where in list(groups.items())[:8]:
                more = f" (+{len(where) - 1} more)" if len(where) > 1 else ""
                line = f"  {where[0]}{more}: {why}"
                out(line if len(line) <= WIDTH else line[:WIDTH - 3] + "...")
            if len(groups) > 8:
                out(f"  ... and {len(groups) - 8} other reasons (above)")
        extra = f", {na} not applicable" if na else ""
        out(f"{passed} passed, {failed} failed{extra} (seed {self.seed})")
        return 1 if failed or not passed or self.noted_failure else 0


def check(args) -> int:
    from phase24.harness.isolate import LoadError, Run

    gpu = torch.cuda.is_available()
    spec = {"dtypes": args.dtype, "big": args.big, "device": "cuda" if gpu else "cpu",
            "case": args.case}
    if args.file:
        path = Path(args.file)
        if not path.is_file():
            out(f"no such file: {args.file}")
            return 1
        if path.suffix not in (".cu", ".py"):
            out(f"{args.file}: expected a .cu (CUDA C) or a .py (Triton) file")
            return 1
        if path.suffix == ".cu" and not gpu:
            return compile_only(path)
        spec["file"] = str(path.resolve())
        out(f"{path.name}: its code runs in a worker process, with your rights.")
        if not gpu:
            out(INTERPRETER)
    else:
        spec["impls"] = _registry_subjects(args.impl, gpu)
        if spec["impls"] is None:
            return 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    spec["seed"] = seed
    from phase24.harness.check import tolerance_table

    out(f"seed {seed} (replay it with --seed {seed})")
    out(f"tolerances, rtol/atol: {tolerance_table()}")
    table = Table(seed)
    try:
        Run(spec, args.timeout).run(table.ready, table.verdict, table.note)
    except LoadError as err:
        say(f"FAIL: {err}")
        return 1
    return table.summary()
