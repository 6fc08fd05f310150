"""Exploration: time scripts/explore_cuda_push.cu's kernels against `cuda` on the long-row shapes.

    python scripts/explore_cuda_push.py OUT.json [--shapes dtype:MxN ...]
Each candidate is checked first with the lab's own checker (harness.check.compare against the
float64 reference); a wrong one is reported, not timed. (The committed logs of 2026-11-30 were made
with a looser maximum-error check of the script's own, since replaced.)
"""
import json, re, sys, time
import torch
from phase24.bridge.nvcc import compile_cu, arch_of_current_gpu
from phase24.bridge.launch import load_kernel
from phase24.softmax import cuda_impls as ci
from phase24.harness.bench import time_us, copy_gbps
from phase24.harness.check import compare
from phase24.softmax import softmax_reference

SRC = "scripts/explore_cuda_push.cu"
SHAPES = ["bfloat16:1x32768", "bfloat16:64x32768", "float32:1x32768", "float32:64x32768", "bfloat16:2048x131072", "bfloat16:1024x262144", "float32:1024x262144",
          "float32:2048x131072", "bfloat16:4096x65536", "bfloat16:8192x32768",
          "bfloat16:64x262144", "float32:64x262144", "bfloat16:8x131072", "float32:8x131072"]
args = sys.argv[1:]
out_path = args[0]
shapes = args[args.index("--shapes") + 1:] if "--shapes" in args else SHAPES
build = compile_cu(SRC, arch_of_current_gpu())
names = sorted(build.kernels)
copy = copy_gbps()
print(f"copy {copy:.0f} GB/s", flush=True)
results = {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(), "shapes": []}
pat = re.compile(r"x_t(\d+)_k(\d+)_c(\d+)_b(\d+)_p(\d)_(\w+)")
_clean = None


def time_clean(fn, n=200):
    """Like time_us, but the L2 flush reads 256 MB instead of writing it: no dirty lines are
    left to be written back during the timed call."""
    global _clean
    if _clean is None:
        _clean = torch.ones(64 * 2**20, device="cuda")
    fn(); torch.cuda.synchronize()
    st = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        _clean.sum()
        torch.cuda._sleep(300_000)
        st[i].record(); fn(); en[i].record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) for a, b in zip(st, en))
    return 1000 * ts[n // 2]
for spec in shapes:
    dt, mn = spec.split(":")
    m, n = map(int, mn.split("x"))
    dtype = getattr(torch, dt)
    tag = ci.DTYPE_TAG[dtype]
    x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
    ref = softmax_reference(x)
    out = torch.empty_like(x)
    nbytes = 2 * x.numel() * x.element_size()
    row = {"dtype": dt, "M": m, "N": n, "runs": []}
    def record(label, fn, clean=False, check=True):
        out.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        bad = compare(out, ref, dtype)[3] if check else ""
        if bad:
            print(f"  {label}: WRONG: {bad}", flush=True)
            row["runs"].append({"label": label, "wrong": bad})
            return
        us = time_us(fn, warmup_ms=10, rep_ms=40)
        pct = 100 * nbytes / us / 1e3 / copy
        extra = ""
        if clean:
            cu = time_clean(fn)
            extra = f"   clean flush {cu:8.2f} us {100 * nbytes / cu / 1e3 / copy:5.1f}%"
        print(f"  {label:34s} {us:9.2f} us {pct:5.1f}%{extra}", flush=True)
        row["runs"].append({"label": label, "us": us, "pct_copy": pct, "clean_us": cu if clean else None})
    print(spec, flush=True)
    few = m <= 256
    record("cuda (tuned)", lambda: ci.rows_best(x, out), few)
    if few:
        record("torch", lambda: torch.softmax(x, -1), True, check=False)
        src = torch.empty_like(x)
        t0 = time_us(lambda: out.copy_(src), warmup_ms=10, rep_ms=40)
        t1 = time_clean(lambda: out.copy_(src))
        print(f"  same-size copy {t0:9.2f} us ({100 * nbytes / t0 / 1e3 / copy:5.1f}%)   clean flush {t1:8.2f} us ({100 * nbytes / t1 / 1e3 / copy:5.1f}%)", flush=True)
        row["copy_same_size"] = {"us": t0, "clean_us": t1}
    for name in names:
        t_, k, c, b, p, ntag = pat.match(name).groups()
        t_, k, c = int(t_), int(k), int(c)
        cap = t_ * k * c * (16 // x.element_size())
        if ntag != tag or cap < n or cap >= 2 * n:
            continue
        kern = load_kernel(SRC, name)
        record(name, lambda: ci._cluster_per_row(kern, x, out, t_, c), few)
    results["shapes"].append(row)
    json.dump(results, open(out_path, "w"), indent=1)
