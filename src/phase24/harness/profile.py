"""`phase24 profile OP`: Nsight Compute on exactly one launch, and a summary a reader needs.

ncu runs this module as its target: one warm-up call outside the NVTX range "phase24", then
one call inside it; ncu (`--nvtx-include phase24/ -c 1`) profiles the first kernel in the
range with `--set full`, `--clock-control none` and `--import-source on` (the -lineinfo builds
map SASS to .cu lines). The .ncu-rep is kept, with an xz-compressed copy (.ncu-rep.xz, about
a twentieth of its size: what git keeps; `xz -dk FILE.ncu-rep.xz` gives the report back for
Nsight Compute's window); figures are read back from it with `ncu --import` into JSON and
Markdown.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import lzma
import re
import shutil
import subprocess
import sys
from pathlib import Path

def unit_scale(key: str, unit: str) -> float:
    """Scale a raw ncu value to this summary's units: microseconds for times, GB/s for
    bandwidths, bytes for sizes. ncu picks the unit per value (ms, us, ns; TB/s, GB/s, ...;
    byte/block, Kbyte/block: 8 KiB of static shared memory reads 8.192 Kbyte), so read its prefix."""
    u = unit.strip()
    if key == "duration_us":
        return {"n": 1e-3, "u": 1.0, "µ": 1.0, "m": 1e3, "s": 1e6}.get(u[:1], 1.0)
    if key == "dram_gbps":
        return {"T": 1e3, "G": 1.0, "M": 1e-3, "K": 1e-6, "k": 1e-6, "b": 1e-9, "B": 1e-9}.get(u[:1], 1.0)
    if key == "shared_bytes_per_block":
        return {"K": 1e3, "k": 1e3, "M": 1e6}.get(u[:1], 1.0)
    return 1.0
METRICS = {
    "duration_us": "gpu__time_duration.sum",
    "dram_gbps": "dram__bytes.sum.per_second",
    "dram_pct_of_peak": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_sol_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "compute_sol_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1_hit_pct": "l1tex__t_sector_hit_rate.pct",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "registers_per_thread": "launch__registers_per_thread",
    "shared_bytes_per_block": "launch__shared_mem_per_block_static",
    "block_size": "launch__block_size",
    "grid_size": "launch__grid_size",
    "occupancy_limit_registers": "launch__occupancy_limit_registers",
    "occupancy_limit_shared_mem": "launch__occupancy_limit_shared_mem",
    "occupancy_limit_warps": "launch__occupancy_limit_warps",
    "occupancy_limit_blocks": "launch__occupancy_limit_blocks",
}
ALIASES = {"dram__throughput.avg.pct_of_peak_sustained_elapsed":
           "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"}
STALL = re.compile(r"smsp__average_warps?_issue_stalled_(\w+?)_per_issue_active\.ratio$")


class ProfileError(RuntimeError):
    pass


def folder(op_name: str) -> Path:
    """Where this GPU's profiles of ``op_name`` are recorded: results/<gpu>/<op>/profiles/."""
    from phase24.core.provenance import REPO, gpu_info, gpu_slug

    return REPO / "results" / gpu_slug(gpu_info()["gpu"]) / op_name / "profiles"


def ncu_path() -> str:
    path = shutil.which("ncu")
    if not path:
        raise ProfileError("Nsight Compute (ncu) is not installed here. The recorded profiles "
                           "are under results/<gpu>/<op>/profiles/ (ncu-ui reads them; the "
                           ".md summaries).")
    return path


def target(op_name: str, impl: str, shape: str, dtype: str) -> None:
    """What ncu runs: one warm-up call, then exactly one call inside the NVTX range."""
    import torch

    from phase24.core.dtypes import DTYPES
    from phase24.harness.ops import get

    op = get(op_name)
    inputs = op.make_inputs(op.parse_shape(shape), DTYPES[dtype])
    fn = op.learner(Path(impl))[0] if is_file(impl) else op.implementations()[impl]
    fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("phase24")
    fn(*inputs)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def is_file(impl: str) -> bool:
    """A learner's file (`profile --file F`) rather than a registry name."""
    return impl.endswith((".cu", ".py"))


def profile(op_name: str, impl: str, shape: str, dtype: str, out: Path) -> dict:
    """Profile ``impl`` (a registry name, or a learner's file) and write its summary in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{Path(impl).stem if is_file(impl) else impl}_{dtype}_{shape}"
    rep = out / f"{stem}.ncu-rep"
    cmd = [ncu_path(), "--set", "full", "--clock-control", "none", "--import-source", "on",
           "--nvtx", "--nvtx-include", "phase24/", "-c", "1", "-f", "-o", str(rep.with_suffix("")),
           sys.executable, "-m", "phase24.harness.profile", "target", op_name, impl, shape, dtype]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in text:
        raise ProfileError("ncu cannot read the GPU's counters on this machine (ERR_NVGPUCTRPERM). "
                           "The recorded profiles are under results/<gpu>/<op>/profiles/.")
    if proc.returncode != 0 or not rep.exists():
        raise ProfileError(f"ncu failed for {Path(impl).name}:\n{text[-3000:]}")
    summary = summarise(rep)
    summary.update(impl=Path(impl).name if is_file(impl) else impl, shape=shape, dtype=dtype,
                   command=reproduce(op_name, impl, shape, dtype), ncu_command=" ".join(cmd[1:-7]))
    (out / f"{stem}.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / f"{stem}.md").write_text(markdown(summary))
    rep.with_name(rep.name + ".xz").write_bytes(lzma.compress(rep.read_bytes(), preset=9))
    return summary


RECORDED = {"softmax": "results/h200/profiles/cuda-v3_bfloat16_32768x8192.md",
            "gemm": "results/h200/gemm/profiles/cuda-v3_float32_4096x4096x4096.md"}


def profile_file(op, path: Path, shape: str | None, dtype: str | None, gpu: bool) -> int:
    """`profile OP --file F`: his kernel profiled at the plan's representative shape (float32)
    unless told otherwise, its summary in out/profiles/, and his annotation started."""
    from phase24.core.provenance import REPO
    from phase24.harness import annotation, dod

    notes = dod.ANNOTATION
    shown = notes.relative_to(REPO)
    if not gpu:
        print(f"No GPU here: Nsight Compute profiles {path.name} only on an NVIDIA GPU. The lab's "
              f"rungs' recorded profiles are in {Path(RECORDED[op.name]).parent}/ (the .md "
              f"summaries; the .ncu-rep.xz files for ncu-ui). The same exercise here: annotate "
              f"{RECORDED[op.name]} in {shown} (a solved one: labs/solutions/my_profile.md).")
        return 1
    shape, dtype = shape or dod.shape_text(op.name), dtype or dod.DTYPE
    out = REPO / "out" / "profiles"
    try:
        s = profile(op.name, str(path.resolve()), shape, dtype, out)
    except ProfileError as err:
        print(err)
        return 1
    print(markdown(s))
    summary = (out / f"{path.stem}_{dtype}_{shape}.md").relative_to(REPO)
    print(f"wrote {summary} (and its .json, .ncu-rep and .ncu-rep.xz)")
    if notes.is_file() and annotation.start(notes, f"{path.name}, {dtype}, {shape}", str(summary)):
        print(f"your annotation: {shown}, its kernel and profile filled in; the rest is yours")
    else:
        print(f"your annotation {shown} already has your writing: left as it is (this profile: "
              f"{summary})")
    return 0


def _ncu_import(rep: Path, *args: str) -> str:
    proc = subprocess.run([ncu_path(), "--import", str(rep), *args], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise ProfileError(f"ncu --import failed: {proc.stderr[-2000:]}")
    return proc.stdout


def summarise(rep: Path) -> dict:
    rows = list(csv.reader(io.StringIO(_ncu_import(rep, "--page", "raw", "--csv"))))
    header, units, values = rows[0], rows[1], rows[2]
    raw = dict(zip(header, values))
    unit = dict(zip(header, units))

    def number(name):
        v = raw.get(name, "").replace(",", "")
        try:
            return float(v)
        except ValueError:
            return None

    out = {"kernel": raw.get("Kernel Name", ""), "rep": rep.name}
    out["units_as_read"] = {}
    for key, metric in METRICS.items():
        if metric not in raw:  # a few names differ between ncu versions
            metric = ALIASES.get(metric, metric)
        v = number(metric)
        if v is not None:
            v *= unit_scale(key, unit.get(metric, ""))
            out["units_as_read"][key] = f"{metric} [{unit.get(metric, '')}]"
        out[key] = v
    stalls = {}
    for name in header:
        m = STALL.search(name)
        v = number(name)
        if m and v:
            stalls[m.group(1)] = v
    out["top_stalls"] = sorted(stalls.items(), key=lambda kv: -kv[1])[:5]
    details = _ncu_import(rep, "--page", "details", "--print-details", "all")
    out["guidance"] = guidance(details)[:30]
    return out


RULE = re.compile(r"(\s*)(OPT|WRN|INF)\s+\S")


def guidance(details: str) -> list[str]:
    """ncu's rule messages, one string each: a message starts at its OPT, WRN or INF and goes on
    over the lines indented past that word, up to a blank line or the next message."""
    found, indent = [], None
    for line in details.splitlines():
        start = RULE.match(line)
        if start:
            found.append(" ".join(line.split()))
            indent = len(start.group(1))
        elif indent is not None and line.strip() and len(line) - len(line.lstrip()) > indent:
            found[-1] += " " + " ".join(line.split())
        else:
            indent = None
    return found


def resummarise(op_name: str, folder: Path) -> list[dict]:
    """Rewrite the JSON/Markdown summaries of every .ncu-rep in ``folder`` (no new profiling)."""
    done = []
    for rep in sorted(folder.glob("*.ncu-rep")):
        impl, dtype, shape = rep.stem.rsplit("_", 2)
        s = summarise(rep)
        s.update(impl=impl, shape=shape, dtype=dtype,
                 command=reproduce(op_name, impl, shape, dtype))
        (folder / f"{rep.stem}.json").write_text(json.dumps(s, indent=1) + "\n")
        (folder / f"{rep.stem}.md").write_text(markdown(s))
        done.append(s)
    return done


def reproduce(op_name: str, impl: str, shape: str, dtype: str) -> str:
    which = f"--file {impl}" if is_file(impl) else f"--impl {impl}"
    return f"python -m phase24 profile {op_name} {which} --shape {shape} --dtype {dtype}"


def markdown(s: dict) -> str:
    f = lambda v, d=1: "n/a" if v is None else f"{v:.{d}f}"
    lines = [f"# {s['impl']} {s['dtype']} {s['shape']}", "", f"Kernel: `{s['kernel'][:120]}`", "",
             "| figure | value |", "|---|---|",
             f"| duration | {f(s['duration_us'], 2)} us |",
             f"| DRAM throughput | {f(s['dram_gbps'], 0)} GB/s ({f(s['dram_pct_of_peak'])}% of peak) |",
             f"| memory / compute speed of light | {f(s['memory_sol_pct'])}% / {f(s['compute_sol_pct'])}% |",
             f"| L1 / L2 hit rate | {f(s['l1_hit_pct'])}% / {f(s['l2_hit_pct'])}% |",
             f"| occupancy achieved / theoretical | {f(s['achieved_occupancy_pct'])}% / "
             f"{f(s['theoretical_occupancy_pct'])}% |",
             f"| occupancy limits (blocks/SM): registers, shared, warps, blocks | "
             f"{f(s['occupancy_limit_registers'], 0)}, {f(s['occupancy_limit_shared_mem'], 0)}, "
             f"{f(s['occupancy_limit_warps'], 0)}, {f(s['occupancy_limit_blocks'], 0)} |",
             f"| registers / thread, static shared / block | {f(s['registers_per_thread'], 0)}, "
             f"{f(s['shared_bytes_per_block'], 0)} B |",
             f"| grid x block | {f(s['grid_size'], 0)} x {f(s['block_size'], 0)} |", "",
             "Top warp stalls (cycles per issued instruction): " +
             ", ".join(f"{k} {v:.2f}" for k, v in s["top_stalls"]), "",
             "ncu's guided analysis:", ""]
    lines += [f"- {g}" for g in s["guidance"]] or ["- (none)"]
    lines += ["", f"Reproduce: `{s['command']}`", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m phase24.harness.profile")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("target")
    t.add_argument("op")
    t.add_argument("impl")
    t.add_argument("shape")
    t.add_argument("dtype")
    a = p.parse_args(argv)
    target(a.op, a.impl, a.shape, a.dtype)
    return 0


if __name__ == "__main__":
    sys.exit(main())
