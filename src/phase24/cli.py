"""The lab's command line: `python -m phase24 <command>` (also installed as `phase24`)."""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

console = Console(width=None if sys.stdout.isatty() else 200)
REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"


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
    if not _gpu():
        console.print("[yellow]No GPU here: lab 00's run step needs one. The compile step works: "
                      "`python -m phase24 build`.[/]")
        return 0
    from phase24.hello import hello

    console.print(hello())
    return 0


def cmd_build(args) -> int:
    """Compile every kernel for the chosen architectures and print ptxas's resource report."""
    from phase24.bridge.nvcc import KERNELS_DIR, compile_cu
    from phase24.softmax.cuda_impls import HOPPER_ONLY

    table = Table(title="ptxas resource report (registers, shared memory, spills)")
    for col in ("file", "arch", "kernels", "registers (min-max)", "smem B (max)", "spill B"):
        table.add_column(col)
    bad = 0
    for src in sorted(KERNELS_DIR.glob("*.cu")):
        for arch in args.arch:
            if src.name in HOPPER_ONLY and not arch.startswith("sm_90"):
                table.add_row(src.name, arch, "-", "Hopper-only by design", "", "")
                continue
            b = compile_cu(src, arch)
            ks = b.kernels.values()
            regs = [k.registers for k in ks]
            spills = sum(k.spills + k.stack_bytes for k in ks)
            bad += spills > 0
            table.add_row(src.name, arch, str(len(regs)), f"{min(regs)}-{max(regs)}",
                          str(max(k.shared_bytes for k in ks)),
                          f"[red]{spills}[/]" if spills else "0")
    console.print(table)
    return 1 if bad else 0


# ---- check ---------------------------------------------------------------------------------------

def _impls(names: list[str] | None, file: str | None):
    from phase24.softmax import IMPLEMENTATIONS

    if file:
        path = Path(file)
        if not path.exists():
            raise SystemExit(f"no such file: {file}")
        if path.suffix == ".py":
            from phase24.softmax.learner_triton import load_learner_softmax as load_py

            return {f"file:{path.name}": load_py(path)}, None
        if path.suffix == ".cu":
            from phase24.softmax.learner_cuda import load_learner_softmax

            fn, dtypes = load_learner_softmax(path)
            return {f"file:{path.name}": fn}, dtypes
        raise SystemExit(f"{file}: expected a .cu or a .py file")
    names = names or list(IMPLEMENTATIONS)
    unknown = [n for n in names if n not in IMPLEMENTATIONS]
    if unknown:
        raise SystemExit(f"unknown implementation(s) {unknown}; choose from {list(IMPLEMENTATIONS)}")
    return {n: IMPLEMENTATIONS[n] for n in names}, None


def _compile_only(file: str) -> int:
    from phase24.bridge.nvcc import compile_cu

    for arch in ("sm_80", "sm_89", "sm_90a"):
        b = compile_cu(file, arch)
        for k in b.kernels.values():
            console.print(f"{arch} {k.name}: {k.registers} registers, {k.shared_bytes} B shared, "
                          f"{k.spills} B spilled")
    console.print("[yellow]Compiled. Running it needs an NVIDIA GPU: skipped here.[/]")
    return 0


def cmd_check(args) -> int:
    from phase24.harness.cases import DTYPES
    from phase24.harness.check import run_checks, tolerance_table
    from phase24.softmax.triton_ladder import INTERPRETED

    gpu = _gpu()
    if args.file and args.file.endswith(".cu") and not gpu:
        return _compile_only(args.file)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    impls, file_dtypes = _impls(args.impl, args.file)
    if not gpu:
        runnable = {n: f for n, f in impls.items() if n == "torch" or (
            (n.startswith("triton") or n.endswith(".py")) and INTERPRETED)}
        skipped = sorted(set(impls) - set(runnable))
        if skipped:
            console.print(f"[yellow]No GPU: skipping {', '.join(skipped)}[/]")
        impls = runnable
        if any(n.startswith("triton") or n.endswith(".py") for n in impls):
            console.print("Triton kernels run in the interpreter on the CPU (TRITON_INTERPRET=1).")
    dtypes = [DTYPES[d] for d in args.dtype]
    if file_dtypes:
        dtypes = [d for d in dtypes if d in file_dtypes]
    console.print(f"seed {seed} (replay with --seed {seed}); tolerances: {tolerance_table()}")
    table = Table(title="softmax against the float64 reference")
    for col in ("impl", "dtype", "case", "rel L2", "err/tol", "row sum err", "verdict"):
        table.add_column(col)
    failures = []

    def show(v):
        table.add_row(v.impl, v.dtype, v.case, f"{v.rel_l2:.1e}", f"{v.worst:.2f}",
                      f"{v.row_sum_err:.1e}", "[green]ok[/]" if v.ok else f"[red]FAIL[/] {v.why}")
        if not v.ok:
            failures.append(v)

    run_checks(impls, dtypes, "cuda" if gpu else "cpu", seed, big=args.big, on_result=show)
    console.print(table)
    total = len(table.rows)
    console.print(f"{total - len(failures)} passed, {len(failures)} failed (seed {seed})")
    return 1 if failures or total == 0 else 0


# ---- bench and recorded results -------------------------------------------------------------------

def cmd_bench(args) -> int:
    from rich.progress import Progress

    from phase24.harness import bench

    if not _gpu():
        console.print("[yellow]No GPU: nothing to time here. The last recorded results:[/]")
        return cmd_results(args)
    impls, _ = _impls(args.impl, None)
    shapes = bench.parse_shapes(args.shapes) if args.shapes else bench.standard_shapes()
    with Progress(console=console, transient=True) as progress:
        result = bench.run_bench(impls, args.dtype, shapes, progress)
    folder = Path(args.out) if args.out else RESULTS / bench.gpu_slug(result["gpu"])
    path, png = bench.save(result, folder)
    print_results(result)
    for r in result["records"]:
        if r.get("plan"):
            console.print(f"{r['impl']} {r['dtype']} {r['M']}x{r['N']}: {r['plan']}")
    console.print(f"wrote {path} and {png}")
    for f in result["failures"]:
        console.print(f"[red]wrong output: {f}[/]")
    return 1 if result["failures"] else 0


def print_results(result: dict, impls: list[str] | None = None) -> None:
    recs = result["records"]
    impls = impls or list(dict.fromkeys(r["impl"] for r in recs))
    table = Table(title=f"softmax on {result['gpu']}: GB/s (% of copy {result['copy_gbps']:.0f} "
                        f"GB/s), speedup over torch; commit {result['commit'][:10]}")
    table.add_column("dtype")
    table.add_column("M x N")
    for i in impls:
        table.add_column(i, justify="right")
    for dt in dict.fromkeys(r["dtype"] for r in recs):
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in recs if r["dtype"] == dt):
            row = [dt, f"{m}x{n}"]
            for i in impls:
                r = next((r for r in recs if (r["impl"], r["dtype"], r["M"], r["N"]) ==
                          (i, dt, m, n)), None)
                row.append("" if r is None else
                           f"{r['gbps']:.0f} ({r['pct_copy']:.0f}%) {r['speedup_vs_torch']:.2f}x")
            table.add_row(*row)
    console.print(table)


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
                  f"{d['cpu_count']} CPU cores, torch {d['torch']} ({f.relative_to(REPO)}).")
        return 0
    files = sorted(RESULTS.glob("*/softmax.json"))
    if not files:
        console.print("no recorded results under results/")
        return 0
    for f in files:
        result = json.loads(f.read_text())
        if getattr(args, "markdown", False):
            from phase24.harness.bench import markdown_table

            print(markdown_table(result))
            continue
        print_results(result, ["torch", "cuda", "triton"] if not getattr(args, "all", False)
                      else None)
        console.print(f"(recorded {result['date']} on {result['gpu']}; {f.relative_to(REPO)})")
    return 0


# ---- profile --------------------------------------------------------------------------------------

def cmd_profile(args) -> int:
    from phase24.harness import profile as prof

    if not _gpu():
        console.print("[yellow]No GPU here: Nsight Compute needs one. The recorded H200 profiles "
                      "are in results/h200/profiles/ (*.md summaries, *.ncu-rep for ncu-ui).[/]")
        return 0
    out = Path(args.out) if args.out else RESULTS / "h200" / "profiles"
    if args.resummarise:
        for s in prof.resummarise(out):
            console.print(prof.markdown(s))
        return 0
    jobs = prof.DEFAULT_SET if args.all else [(i, args.shape) for i in (args.impl or ["cuda"])]
    status = 0
    for impl, shape in jobs:
        try:
            s = prof.profile(impl, shape, args.dtype, out)
        except prof.ProfileError as err:
            console.print(f"[red]{err}[/]")
            status = 1
            continue
        console.print(prof.markdown(s))
    return status


# ---- the main job ---------------------------------------------------------------------------------

def cmd_run(args) -> int:
    """Everything this machine can do: on a GPU the checks and the benchmark; without one,
    the toolchain report, the kernel builds, the Triton checks in the interpreter, a short
    MiniGPT run and the last recorded H200 results."""
    from phase24.harness.bench import BENCH_DTYPES

    ns = argparse.Namespace
    steps = [("doctor", cmd_doctor, ns(no_ncu=True))]
    if _gpu():
        steps += [("hello (lab 00)", cmd_hello, ns()),
                  ("check softmax", cmd_check, ns(impl=None, file=None, seed=None, big=False,
                                                  dtype=["float32", "float16", "bfloat16"])),
                  ("bench softmax", cmd_bench, ns(impl=None, dtype=list(BENCH_DTYPES),
                                                  shapes=None, out=None))]
    else:
        steps += [("build every kernel (sm_80, sm_89, sm_90a)", cmd_build,
                   ns(arch=["sm_80", "sm_89", "sm_90a"]))]
        console.print("[yellow]No GPU here: running what a CPU can; skipped: the CUDA checks, "
                      "the benchmark and the profiles (recorded H200 results are shown).[/]")
        steps += [("check softmax in the Triton interpreter", _check_interpreted, ns()),
                  ("recorded H200 results", cmd_results, ns(all=False))]
    steps += _minigpt_steps()
    status = 0
    for title, fn, a in steps:
        console.rule(title)
        rc = fn(a)
        status |= rc
        if rc:
            console.print(f"[red]{title}: failed[/]")
    return status


def _check_interpreted(_args) -> int:
    import subprocess

    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "phase24", "check", "softmax", "--impl",
                           "torch", "triton-naive", "triton-v1", "triton-v2", "triton-v3",
                           "triton"], env=env).returncode


def _minigpt_steps():
    try:
        from phase24.minigpt.cli import run as minigpt_run
    except ImportError:
        return []
    ns = argparse.Namespace
    return [("MiniGPT parity report (NumPy vs PyTorch, float64)", lambda a: minigpt_run(a),
             ns(minigpt_command="parity"))]


# ---- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from phase24.harness.bench import BENCH_DTYPES

    p = argparse.ArgumentParser(prog="phase24", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("doctor", help="what this machine has and what works on it")
    s.add_argument("--no-ncu", action="store_true", help="skip the Nsight Compute probe")
    s.set_defaults(fn=cmd_doctor)

    s = sub.add_parser("hello", help="lab 00: vector add through the bridge (GPU)")
    s.set_defaults(fn=cmd_hello)

    s = sub.add_parser("build", help="compile every .cu and print ptxas's resource report")
    s.add_argument("--arch", nargs="+", default=["sm_80", "sm_89", "sm_90a"])
    s.set_defaults(fn=cmd_build)

    dts = ["float32", "float16", "bfloat16"]
    s = sub.add_parser("check", help="check implementations against float64")
    s.add_argument("op", choices=["softmax"])
    s.add_argument("--impl", nargs="+", help="registry names (default: all)")
    s.add_argument("--file", help="grade your own kernel: a .cu (lab ABI) or a Triton .py file")
    s.add_argument("--dtype", nargs="+", default=dts, choices=dts)
    s.add_argument("--seed", type=int, help="replay a run with this seed")
    s.add_argument("--big", action="store_true", help="add a case of more than 2^31 elements")
    s.set_defaults(fn=cmd_check)

    s = sub.add_parser("bench", help="time implementations against torch and the copy ceiling")
    s.add_argument("op", choices=["softmax"])
    s.add_argument("--impl", nargs="+", help="registry names (default: all)")
    s.add_argument("--dtype", nargs="+", default=list(BENCH_DTYPES), choices=dts)
    s.add_argument("--shapes", help="comma-separated MxN (default: the standard sweep)")
    s.add_argument("--out", help="folder for the JSON and PNG (default: results/<gpu>/)")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("profile", help="Nsight Compute on one launch, with a summary")
    s.add_argument("op", choices=["softmax"])
    s.add_argument("--impl", nargs="+", help="registry names (default: cuda)")
    s.add_argument("--shape", default="32768x8192", help="MxN (default 32768x8192)")
    s.add_argument("--dtype", default="bfloat16", choices=dts)
    s.add_argument("--all", action="store_true", help="the chapter's recorded set of profiles")
    s.add_argument("--resummarise", action="store_true",
                   help="rewrite the summaries of the .ncu-rep files in --out (needs ncu)")
    s.add_argument("--out", help="folder (default: results/h200/profiles/)")
    s.set_defaults(fn=cmd_profile)

    s = sub.add_parser("results", help="show the last recorded benchmark results")
    s.add_argument("--all", action="store_true", help="every implementation, not only the main ones")
    s.add_argument("--markdown", action="store_true", help="the README's table")
    s.add_argument("--minigpt", action="store_true", help="the MiniGPT tokens/s table")
    s.set_defaults(fn=cmd_results)

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
    args = build_parser().parse_args(argv)
    return args.fn(args) or 0


if __name__ == "__main__":
    sys.exit(main())
