"""`phase24 bench softmax`: time every implementation against torch and the copy ceiling.

Each time is the median GPU time of many calls (CUDA events around each call, the L2 cache
flushed before each, after warm-up; see `time_us`). A softmax moves 2 * M * N * element
bytes at least (each input read once, each output written once); that over the time is its
bandwidth, compared with a device-to-device copy measured in the same run. Each call is also
timed with the host's launch included (`host_us`, as a caller of a short call sees it), and
the installed peers (Liger-Kernel, QuACK) are timed beside torch.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import subprocess
from pathlib import Path

import torch

from phase24.softmax import SoftmaxArgumentError, softmax_reference
from phase24.harness.check import compare

BULK_ELEMENTS = 2**28
BULK_NS = tuple(2**k for k in range(7, 19))  # 128 ... 262144
FEW_ROW_SHAPES = ((1, 32768), (8, 131072), (64, 32768), (64, 262144))
BENCH_DTYPES = ("float32", "bfloat16")
REPO = Path(__file__).resolve().parents[3]


def standard_shapes() -> list[tuple[int, int]]:
    return [(BULK_ELEMENTS // n, n) for n in BULK_NS] + list(FEW_ROW_SHAPES)


def is_bulk(m: int, n: int) -> bool:
    return m * n == BULK_ELEMENTS


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """'4096x4096,1x32768' -> [(4096, 4096), (1, 32768)]."""
    shapes = []
    for part in text.split(","):
        try:
            m, n = (int(v) for v in part.lower().split("x"))
        except ValueError:
            raise ValueError(f"bad shape {part!r}: write MxN, e.g. 4096x4096") from None
        shapes.append((m, n))
    return shapes


@dataclasses.dataclass
class Record:
    impl: str
    dtype: str
    M: int
    N: int
    us: float
    gbps: float
    pct_copy: float
    speedup_vs_torch: float | None
    plan: str | None = None  # the configuration it chose, where it can say (see plan_of)
    host_us: float | None = None  # a call as a caller sees it, the host's launch included


def available_peers() -> dict:
    """Other libraries' softmax, timed beside ours when they are installed: Liger-Kernel
    (Triton) and QuACK (CuTe DSL). {} when neither imports."""
    peers = {}
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction

        peers["liger"] = LigerSoftmaxFunction.apply
    except Exception:
        pass
    try:
        from quack.softmax import softmax_fwd

        peers["quack"] = softmax_fwd
    except Exception:
        pass
    return peers


def plan_of(name: str, x: torch.Tensor) -> str | None:
    """The kernels an implementation launches for x, in words, where it can say: the Triton
    rungs' (triton_ladder.which, fallbacks included)."""
    from phase24.softmax import triton_ladder

    if name in triton_ladder.RUNGS:
        return triton_ladder.which(x, name)
    return None


def bytes_moved(m: int, n: int, dtype: torch.dtype) -> int:
    return 2 * m * n * torch.empty((), dtype=dtype).element_size()


_flush: torch.Tensor | None = None


def time_us(fn, warmup_ms: float = 25, rep_ms: float = 100, host: bool = False) -> float:
    """Median GPU time of ``fn()`` in microseconds (``host``: with the host's launch included).

    Before each timed call the L2 cache is flushed (256 MB written) and the GPU is kept busy
    for ~150 us (torch.cuda._sleep), so the CPU has queued the call before the start event
    fires: the time is the GPU's, without Python's launch overhead (~10-60 us a call here,
    more for two launches, which would otherwise dominate rows of a few hundred KB). CUDA
    events bracket each call. The flush writes, as triton.testing.do_bench's does, so the
    timed call also pays for writing back the dirty lines it evicts (L2 holds ~50 MB): small
    against a 1 GB shape, a large share of a 64 MB one. `run_bench` therefore also times a copy
    of each shape's bytes, the ceiling at that size under the same timing.

    With ``host`` the GPU is not kept busy: the start event fires as soon as the flush ends,
    so the time includes whatever of the host's work on the call the GPU waits for (its
    argument checks, launch configuration, each launch), as triton.testing.do_bench measures
    it and as a caller of a short call sees it.
    """
    global _flush
    if _flush is None:
        _flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        fn()
    n = min(1000, max(10, int(rep_ms / estimate_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        _flush.zero_()
        if not host:
            torch.cuda._sleep(300_000)  # ~150 us of GPU cycles
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return 1000.0 * times[len(times) // 2]


def copy_gbps(nbytes: int = 2**31) -> float:
    """Device-to-device copy bandwidth (bytes read + bytes written per second), in GB/s."""
    src = torch.randn(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    us = time_us(lambda: dst.copy_(src))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * nbytes / us / 1e3


def verify(out: torch.Tensor, x: torch.Tensor, rows: int = 16) -> str:
    """Compare a few rows of a timed output with the float64 reference; '' when right."""
    m = x.shape[0]
    idx = torch.unique(torch.tensor([0, m - 1, *torch.randint(0, m, (rows,)).tolist()])).cuda()
    return compare(out[idx], softmax_reference(x[idx]), x.dtype)[3]


def gpu_info() -> dict:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"gpu": props.name, "sms": props.multi_processor_count, "driver": driver_version()}


def driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0]
    except Exception:
        return "unknown"


def versions() -> dict:
    import triton

    v = {"python": platform.python_version(), "torch": torch.__version__,
         "triton": triton.__version__, "cuda_runtime": torch.version.cuda}
    try:
        import cuda.core

        v["cuda_core"] = cuda.core.__version__
    except Exception:
        v["cuda_core"] = None
    try:
        from phase24.bridge.nvcc import nvcc_version

        v["nvcc"] = nvcc_version()
    except Exception:
        v["nvcc"] = None
    return v


def git_commit() -> str:
    """HEAD of the repository (PHASE24_COMMIT when the tree was copied without .git)."""
    if os.environ.get("PHASE24_COMMIT"):
        return os.environ["PHASE24_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except Exception:
        return "unknown"


def gpu_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200'; the folder under results/."""
    words = [w for w in name.lower().replace("nvidia", "").split() if w]
    return "-".join(words) or "gpu"


def run_bench(impls: dict, dtypes: list[str], shapes: list[tuple[int, int]], progress=None,
              peers: dict | None = None) -> dict:
    """Time torch (each speed-up's baseline, asked for or not), ``impls`` and the installed peers
    (available_peers) on every shape."""
    from phase24.harness.cases import DTYPES
    from phase24.softmax import IMPLEMENTATIONS

    peers = available_peers() if peers is None else peers
    impls = {"torch": IMPLEMENTATIONS["torch"], **impls,
             **{k: v for k, v in peers.items() if k not in impls}}
    copy = copy_gbps()
    records: list[Record] = []
    same_size: list[dict] = []  # a copy of each shape's bytes: the ceiling at that size
    failures: list[str] = []
    refused: list[str] = []
    names = list(impls)  # torch first
    total = len(dtypes) * len(shapes) * len(names)
    task = progress.add_task("bench", total=total) if progress else None
    for dtname in dtypes:
        dtype = DTYPES[dtname]
        for m, n in shapes:
            x = torch.randn(m, n, device="cuda", dtype=torch.float32).mul_(3).to(dtype)
            torch_us = None
            for name in names:
                fn = impls[name]
                if progress:
                    progress.update(task, description=f"{name} {dtname} {m}x{n}")
                try:
                    out = fn(x)
                except Exception as err:  # a documented limit (e.g. triton-naive), or a peer's
                    if not isinstance(err, SoftmaxArgumentError) and name not in peers:
                        raise
                    first = (str(err).strip().splitlines() or [""])[0][:200]
                    refused.append(f"{name} {dtname} {m}x{n}: {type(err).__name__}: {first}"
                                   if name in peers else f"{name} {dtname} {m}x{n}: {err}")
                    if progress:
                        progress.advance(task)
                    continue
                why = verify(out, x)
                us = time_us(lambda: fn(x))
                host_us = time_us(lambda: fn(x), host=True)
                why = why or verify(fn(x), x)  # and again after the timed loops
                if why:
                    failures.append(f"{name} {dtname} {m}x{n}: {why}")
                if name == "torch":
                    torch_us = us
                gbps = bytes_moved(m, n, dtype) / us / 1e3
                records.append(Record(name, dtname, m, n, round(us, 3), round(gbps, 1),
                                      round(100 * gbps / copy, 1),
                                      round(torch_us / us, 3) if torch_us else None,
                                      plan_of(name, x), round(host_us, 3)))
                del out
                if progress:
                    progress.advance(task)
            dst = torch.empty_like(x)
            us = time_us(lambda: dst.copy_(x))
            host_us = time_us(lambda: dst.copy_(x), host=True)
            same_size.append({"dtype": dtname, "M": m, "N": n, "us": round(us, 3), "pct_copy": round(
                100 * bytes_moved(m, n, dtype) / us / 1e3 / copy, 1), "host_us": round(host_us, 3)})
            del x, dst
            torch.cuda.empty_cache()
    info = gpu_info()
    return {
        "gpu": info["gpu"], "sms": info["sms"], "driver": info["driver"], "versions": versions(),
        "commit": git_commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "timing": "median GPU time per call (CUDA events), L2 flushed and the GPU kept busy "
                  "before each call so Python launch overhead is excluded; warm-up 25 ms, "
                  "10-1000 repetitions over ~100 ms (harness/bench.py time_us); host_us: the "
                  "same without keeping the GPU busy, so the host's launch time is included",
        "peers": sorted(peers),
        "copy_gbps": round(copy, 1), "copy_same_size": same_size, "failures": failures,
        "refused": refused,
        "records": [dataclasses.asdict(r) for r in records],
    }


# Spanish pages: decimal comma, digits not grouped, µs, and a no-break space before units and %.
NBSP = "\u00a0"


def es_number(x: float, decimals: int) -> str:
    """A number as a Spanish text writes it: decimal comma, digits not grouped (4242; 506,3)."""
    return f"{x:.{decimals}f}".replace(".", ",")


# The table's words and number style, per language.
TABLE_WORDS = {
    "en": dict(dtype="dtype", shape="M x N", vs="cuda vs torch", refused="refused", x="x",
               times="x", num=lambda v, d: f"{v:.{d}f}", cell="{us} us, {gbps} GB/s ({pct}%)"),
    "es": dict(dtype="tipo de dato", shape="M × N", vs="cuda frente a torch", refused="rechazada",
               x=f"{NBSP}×{NBSP}", times="×", num=es_number,
               cell=f"{{us}}{NBSP}µs, {{gbps}}{NBSP}GB/s ({{pct}}{NBSP}%)"),
}


def markdown_table(result: dict, impls=("torch", "cuda", "triton"), lang: str = "en") -> str:
    """The README's results table (lang "es": the Spanish pages'), made from a benchmark JSON:
    time, GB/s and % of copy per implementation. Shapes keep their digits ungrouped, as they are
    typed on the command line."""
    w = TABLE_WORDS[lang]
    recs = {(r["impl"], r["dtype"], r["M"], r["N"]): r for r in result["records"]}
    head = f"| {w['dtype']} | {w['shape']} | " + " | ".join(impls) + f" | {w['vs']} |"
    lines = [head, "|" + "---|" * (len(impls) + 3)]
    for dt in dict.fromkeys(r["dtype"] for r in result["records"]):
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in result["records"] if r["dtype"] == dt):
            cells = []
            for i in impls:
                r = recs.get((i, dt, m, n))
                cells.append(w["refused"] if r is None else w["cell"].format(
                    us=w["num"](r["us"], 1), gbps=f"{r['gbps']:.0f}", pct=f"{r['pct_copy']:.0f}"))
            cuda = recs.get(("cuda", dt, m, n))
            lines.append(f"| {dt} | {m}{w['x']}{n} | " + " | ".join(cells) +
                         f" | {w['num'](cuda['speedup_vs_torch'], 2)}{w['times']} |")
    return "\n".join(lines)


def host_rows(result: dict, impls=("torch", "cuda", "triton")) -> tuple[list[str], list[list]]:
    """The few-row shapes as a caller sees them: (columns, rows of [dtype, M, N, then per column
    the microseconds per call with the host's launch included, or None]). The columns: a copy of
    the same bytes (the ceiling under this timing), then ``impls`` and the peers that ran."""
    heads = ["copy"] + list(impls) + [p for p in result.get("peers", []) if p not in impls]
    recs = {(r["impl"], r["dtype"], r["M"], r["N"]): r.get("host_us") for r in result["records"]}
    copies = {(c["dtype"], c["M"], c["N"]): c.get("host_us")
              for c in result.get("copy_same_size", [])}
    rows = []
    for dt in dict.fromkeys(r["dtype"] for r in result["records"]):
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in result["records"]
                                  if r["dtype"] == dt and not is_bulk(r["M"], r["N"])):
            rows.append([dt, m, n, copies.get((dt, m, n))] +
                        [recs.get((i, dt, m, n)) for i in heads[1:]])
    return heads, rows


def host_table(result: dict, lang: str = "en") -> str:
    """The README's few-row table (lang "es": the Spanish pages'): microseconds per call, the
    host's launch included, and cuda's share of the same-size copy's speed."""
    w = TABLE_WORDS[lang]
    heads, rows = host_rows(result)
    share = "cuda / copy" if lang == "en" else "cuda / copia"
    lines = [f"| {w['dtype']} | {w['shape']} | " + " | ".join(heads) + f" | {share} |",
             "|" + "---|" * (len(heads) + 3)]
    unit = " us" if lang == "en" else f"{NBSP}µs"
    for dt, m, n, *us in rows:
        cells = [w["refused"] if u is None else w["num"](u, 1) + unit for u in us]
        copy, cuda = us[0], us[heads.index("cuda")]
        pct = "-" if None in (copy, cuda) else w["num"](100 * copy / cuda, 0) + \
            ("%" if lang == "en" else f"{NBSP}%")
        lines.append(f"| {dt} | {m}{w['x']}{n} | " + " | ".join(cells) + f" | {pct} |")
    return "\n".join(lines)

