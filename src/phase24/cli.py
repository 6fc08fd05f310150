"""The lab's command line: `python -m phase24 <command>` (also installed as `phase24`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

console = Console(width=None if sys.stdout.isatty() else 100)
REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"


def print_flush(line: str) -> None:
    print(line, flush=True)


def _gpu() -> bool:
    import torch

    return torch.cuda.is_available()


# ---- doctor, hello, build -----------------------------------------------------------------------

def cmd_doctor(args) -> int:
    from phase24.doctor import report

    table = Table(title="phase24 doctor", show_header=False)
    for k, v in report(check_ncu=not args.no_ncu):
        table.add_row(k, v)
    console.print(table)
    return 0


def cmd_hello(args) -> int:
    from phase24.hello import hello

    console.print(hello())
    return 0


@contextlib.contextmanager
def fastcall_built():
    """Build the C++ call path while the block runs; then say how calls are made here."""
    import torch

    from phase24.bridge import fastcall
    from phase24.core.layout import out

    if not torch.cuda.is_available():
        yield
        return
    why = []
    worker = threading.Thread(target=lambda: why.append(fastcall.build()), daemon=True)
    worker.start()
    yield
    worker.join()
    out(f"calls decided once per shape are made {fastcall.status()}"
        + (f" (build: {why[0]})" if why and why[0] else ""))


def cmd_build(args) -> int:
    """Compile every kernel of every operation for the chosen architectures and print ptxas's
    resource report, a row as each file is compiled (a cold build takes minutes; a cached one,
    a second)."""
    from phase24.bridge.nvcc import NvccError, compile_cu, nvcc_path
    from phase24.bridge.prebuild import prebuild
    from phase24.core.layout import Columns, out
    from phase24.harness.ops import OPERATIONS, get

    try:
        nvcc_path()
    except NvccError as err:
        out(f"FAIL: {err}")
        return 1
    ops = [get(name) for name in OPERATIONS]
    lab00 = Path(__file__).with_name("vector_add.cu")  # lab 00's kernel, for every target
    jobs = [(lab00, arch) for arch in args.arch] + \
        [job for op in ops for job in op.build_jobs(args.arch)]
    hopper_only = set().union(*(op.hopper_only() for op in ops))
    with fastcall_built():  # the C++ call path, beside the kernels (bridge/fastcall.py)
        prebuild(jobs)  # a cold cache: every file at once, in parallel
    sources = list(dict.fromkeys(src for src, _ in jobs))
    # a file by its operation and name: softmax/v0_naive.cu, gemm/v0_naive.cu, vector_add.cu
    label = {s: (f"{s.parent.parent.name}/{s.name}" if s.parent.name == "cuda" else s.name)
             for s in sources}
    out("ptxas's resource report: registers per thread (min-max over a file's kernels), static "
        "shared\nmemory (max), bytes spilled to local memory or stack (must be 0)")
    cols = Columns(["file", "arch", "kernels", "registers", "smem B", "spill B", "time"],
                   [max(len(v) for v in label.values()), 6, 7, 9, 6, 7, 8],
                   right={"kernels", "registers", "smem B", "spill B", "time"})
    cols.header()
    bad = 0
    for src in sources:
        for arch in args.arch:
            if src.name in hopper_only and not arch.startswith("sm_90"):
                cols.row([label[src], arch, "-", "Hopper-only by design", "", "", ""])
                continue
            t0 = time.monotonic()
            try:
                ks = compile_cu(src, arch).kernels.values()
            except NvccError as err:
                out(f"FAIL: {err}")
                return 1
            regs = [k.registers for k in ks]
            spills = sum(k.spills + k.stack_bytes for k in ks)
            bad += spills > 0
            cols.row([label[src], arch, str(len(regs)), f"{min(regs)}-{max(regs)}",
                      str(max(k.shared_bytes for k in ks)), str(spills),
                      f"{time.monotonic() - t0:.1f} s"], "FAIL: spills" if spills else "")
    return 1 if bad else 0


# ---- check, bench, results ------------------------------------------------------------------------

def _op(args):
    from phase24.harness.ops import UnknownOperation, get

    try:
        return get(args.op)
    except UnknownOperation as err:
        raise SystemExit(str(err)) from None


def cmd_check(args) -> int:
    from phase24.harness.grade import check, learner_file

    op = _op(args)
    learner_file(args)
    return check(op, args)


def _shapes(op, args):
    try:
        return [op.parse_shape(s) for s in args.shapes.split(",")] if args.shapes else None
    except ValueError as err:
        raise SystemExit(f"--shapes: {err}") from None


def cmd_bench(args) -> int:
    from rich.progress import Progress

    from phase24.harness import bench
    from phase24.harness.grade import known, learner_file
    from phase24.harness.report import print_results, save, show_recorded

    op = _op(args)
    learner_file(args)
    names, shapes = known(op, args.impl), _shapes(op, args)
    if args.file is not None:
        from phase24.harness.timefile import bench_file

        if args.out:
            raise SystemExit("--out does not go with --file: your file's runs go to "
                             f"out/history/{op.name}.jsonl, not beside the lab's results")

        from phase24.harness.dod import REPRESENTATIVE

        return bench_file(op, args, shapes or [REPRESENTATIVE[op.name]])
    if not _gpu():
        console.print("[yellow]No GPU here: nothing is timed. The recorded figures for what you "
                      "asked:[/]")
        return show_recorded(op, names, args.dtype, shapes)
    every = op.implementations()
    with Progress(console=console, transient=True, disable=not console.is_terminal) as progress:
        result = bench.run_bench(op, {n: every[n] for n in names}, args.dtype,
                                 shapes or op.shapes(), progress,
                                 on_shape=None if console.is_terminal else print_flush,
                                 sweep=not shapes)
    from phase24.core.provenance import gpu_slug

    folder = Path(args.out) if args.out else RESULTS / gpu_slug(result["gpu"]) / op.name
    path, png = save(op, result, folder)
    print_results(op, result)
    console.print(f"wrote {path} and {png}")
    for f in result["failures"]:
        console.print(f"[red]wrong output: {f}[/]")
    return 1 if result["failures"] else 0


def cmd_results(args) -> int:
    import json

    if getattr(args, "minigpt", False):
        for f in sorted(RESULTS.glob("*/minigpt_speed.json")):
            d = json.loads(f.read_text())
            c = d["config"]
            print("| backend | tokens/s |\n|---|---|")
            for k, v in d["tokens_per_s"].items():
                print(f"| {k} | {v:,.0f} |")
            print(f"\n{c['n_layer']} layers, width {c['n_embd']}, {c['n_head']} heads, context "
                  f"{c['block_size']}, batch {d['batch_size']}, {d['dtype']}; {d['gpu']}, "
                  f"{d['cpu_count']} CPU cores, torch {d['torch']}.")
        return 0
    from phase24.harness.report import recorded, show_recorded

    op = _op(args)
    if getattr(args, "plot", False):  # redraw each recorded run's plot from its JSON
        for path, result in recorded(op):
            print(op.plot(result, path.with_suffix(".png")).relative_to(REPO))
        return 0
    if getattr(args, "markdown", False):
        runs = recorded(op)
        if runs:  # the newest run's tables (results/<gpu>/<op>/README.md shows them)
            print(op.markdown(runs[0][1]))
        return 0
    return show_recorded(op, list(op.implementations()) if getattr(args, "all", False)
                         else list(op.main))


# ---- profile, the Definition of Done -------------------------------------------------------------

def cmd_profile(args) -> int:
    from phase24.harness import profile as prof

    from phase24.harness.grade import known

    op = _op(args)
    known(op, args.impl)
    shape = args.shape or op.profiles[0][1]  # each op's own default: its first recorded profile's
    try:
        op.parse_shape(shape)
    except ValueError as err:
        raise SystemExit(f"--shape: {err}") from None
    if args.file is not None:
        from phase24.harness.grade import learner_file

        learner_file(args)
        if args.impl or args.all or args.resummarise:
            raise SystemExit("--file profiles your kernel alone: without --impl, --all, "
                             "--resummarise")
        return prof.profile_file(op, Path(args.file), args.shape, args.dtype, _gpu())
    if not _gpu():
        console.print(f"[yellow]No GPU here: Nsight Compute needs one. The recorded H200 profiles "
                      f"are in results/h200/{op.name}/profiles/ (*.md summaries, *.ncu-rep.xz for "
                      "ncu-ui).[/]")
        return 0
    out = Path(args.out) if args.out else prof.folder(op.name)
    if args.resummarise:
        for s in prof.resummarise(op.name, out):
            console.print(prof.markdown(s))
        return 0
    jobs = op.profiles if args.all else [(i, shape) for i in (args.impl or ["cuda"])]
    status = 0
    for impl, shape in jobs:
        try:
            s = prof.profile(op.name, impl, shape, args.dtype or "bfloat16", out)
        except prof.ProfileError as err:
            console.print(f"[red]{err}[/]")
            status = 1
            continue
        console.print(prof.markdown(s))
    return status


def cmd_dod(args) -> int:
    from phase24.harness import dod

    return dod.run(_op(args), args, _gpu())


# ---- the main job ---------------------------------------------------------------------------------

def cmd_run(args) -> int:
    from phase24.harness.mainjob import run

    return run(build_parser(), _gpu())


# ---- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from phase24.harness import argtypes
    from phase24.harness.ops import OPERATIONS

    ops = sorted(OPERATIONS)
    op_help = f"the operation ({', '.join(ops)})"
    p = argparse.ArgumentParser(prog="phase24", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("doctor", help="what this machine has and what works on it")
    s.add_argument("--no-ncu", action="store_true", help="skip the Nsight Compute probe")
    s.set_defaults(fn=cmd_doctor)

    s = sub.add_parser("hello", help="lab 00: vector add through the bridge (GPU)")
    s.set_defaults(fn=cmd_hello)

    from phase24.bridge.nvcc import ARCHS

    s = sub.add_parser("build", help="compile every .cu and print ptxas's resource report")
    s.add_argument("--arch", nargs="+", default=["sm_80", "sm_89", "sm_90a"], choices=ARCHS)
    s.set_defaults(fn=cmd_build)

    dts = ["float32", "float16", "bfloat16"]
    s = sub.add_parser("check", help="check implementations against float64",
                       description="Every case runs in a worker process with a time limit: a "
                       "crash or a hang is that case's verdict. Without a GPU, Triton kernels "
                       "run in Triton's interpreter and CUDA C is compiled, not run.")
    s.add_argument("op", help=op_help)
    s.add_argument("--impl", nargs="+", help="registry names (default: all)")
    s.add_argument("--file", help="grade your own kernel: a .cu (lab ABI) or a Triton .py file; "
                   "it runs the file's code, with your rights")
    s.add_argument("--dtype", nargs="+", default=dts, choices=dts)
    s.add_argument("--seed", type=argtypes.seed, help="replay a run with this seed")
    s.add_argument("--big", action="store_true", help="add a case of more than 2^31 elements")
    s.add_argument("--case", metavar="TEXT",
                   help="only the cases whose name contains TEXT (e.g. 4099, view, -inf)")
    s.add_argument("--timeout", type=argtypes.seconds, default=60, metavar="S",
                   help="seconds a case may take before it fails as timed out (default 60)")
    s.add_argument("--load-timeout", type=argtypes.seconds, default=120, metavar="S",
                   help="seconds loading --file (its import, its compilation) may take "
                   "(default 120)")
    s.set_defaults(fn=cmd_check)

    s = sub.add_parser("bench", help="time implementations against torch and the copy ceiling")
    s.add_argument("op", help=op_help)
    s.add_argument("--impl", nargs="+", help="registry names (default: all)")
    s.add_argument("--dtype", nargs="+", default=["float32", "bfloat16"], choices=dts)
    s.add_argument("--file", help="time your own kernel (.cu or Triton .py, as check --file takes "
                   "it) beside the library, once it passes check, at the plan's representative "
                   "shape unless --shapes names others; each run goes to out/history/<op>.jsonl")
    s.add_argument("--shapes", help="comma-separated shapes, MxN (softmax) or MxNxK (gemm); default: the standard sweep")
    s.add_argument("--out", help="folder for the JSON and PNG (default: results/<gpu>/<op>/)")
    s.add_argument("--timeout", type=argtypes.seconds, default=120, metavar="S",
                   help="with --file: seconds a case of its check, or a shape's timings, may take")
    s.add_argument("--load-timeout", type=argtypes.seconds, default=120, metavar="S",
                   help="with --file: seconds loading it (import, compilation) may take")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("profile", help="Nsight Compute on one launch, with a summary")
    s.add_argument("op", help=op_help)
    s.add_argument("--impl", nargs="+", help="registry names (default: cuda)")
    s.add_argument("--file", help="profile your own kernel (as check --file takes it) at the "
                   "plan's representative shape in float32 unless --shape/--dtype say otherwise; "
                   "the summary goes to out/profiles/, and your annotation is labs/starters/"
                   "my_profile.md")
    s.add_argument("--shape", help="MxN (softmax, default 32768x8192) or MxNxK (gemm, default "
                                   "4096x4096x4096)")
    s.add_argument("--dtype", choices=dts, help="default bfloat16 (float32 with --file)")
    s.add_argument("--all", action="store_true", help="the chapter's recorded set of profiles")
    s.add_argument("--resummarise", action="store_true",
                   help="rewrite the summaries of the .ncu-rep files in --out (needs ncu)")
    s.add_argument("--out", help="folder (default: results/h200/<op>/profiles/)")
    s.set_defaults(fn=cmd_profile)

    s = sub.add_parser("results", help="show the last recorded benchmark results")
    s.add_argument("op", nargs="?", default="softmax", help=op_help + ", softmax by default")
    s.add_argument("--all", action="store_true", help="every implementation, not only the main ones")
    s.add_argument("--markdown", action="store_true", help="the README's table")
    s.add_argument("--minigpt", action="store_true", help="the MiniGPT tokens/s table")
    s.add_argument("--plot", action="store_true",
                   help="redraw each recorded run's plot (results/<gpu>/<op>/<op>.png) from its JSON")
    s.set_defaults(fn=cmd_results)

    from phase24.harness import dod, tune

    dod.add_parser(sub, op_help).set_defaults(fn=cmd_dod)
    tune.add_parser(sub, op_help)

    s = sub.add_parser("run", help="the main job: everything this machine can run")
    s.set_defaults(fn=cmd_run)

    try:
        from phase24.minigpt.cli import add_parser as add_minigpt, run as run_minigpt
    except ImportError:
        pass
    else:
        add_minigpt(sub)
        sub.choices["minigpt"].set_defaults(fn=run_minigpt)
    return p


def main(argv: list[str] | None = None) -> int:
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `... | head` ends quietly
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except KeyboardInterrupt:  # Ctrl-C: one line; compilations in flight end, and their folders
        print(f"\nstopped by Ctrl-C during `{args.command}`: nothing after this point was done",
              file=sys.stderr, flush=True)
        return 130
    except Exception as err:  # torch's, named without importing torch for every command
        if type(err).__name__ != "OutOfMemoryError":
            raise
        print(f"Out of GPU memory: {' '.join(str(err).split())[:300]} (other processes on the "
              "GPU may hold it: nvidia-smi lists them)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
