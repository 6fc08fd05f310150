"""Exploration: do cache hints on v10's loads (and stores) pay? Times scripts/explore_cuda_stream.cu's
kernels (v10 with HINT 1-4, see load_global16 in softmax_common.cuh) beside v10 itself (HINT 0)
and plain copies with the same hints, with the project's timing (time_us: writing L2 flush).

    python scripts/explore_cuda_stream.py OUT.json [--shapes dtype:MxN ...]
Every candidate is checked against float64 torch.softmax first; a wrong one is reported, not timed.
"""
import json, sys
import torch
from phase24.bridge.nvcc import compile_cu, arch_of_current_gpu
from phase24.bridge.launch import load_kernel, ptr
from phase24.softmax import cuda_impls as ci
from phase24.harness.bench import time_us, copy_gbps
import numpy as np

SRC = "scripts/explore_cuda_stream.cu"
V10 = f"{ci._kernels_dir()}/softmax_v10_cluster_push.cu"
SHAPES = ["bfloat16:64x262144", "float32:64x262144", "bfloat16:8x131072", "float32:8x131072",
          "bfloat16:64x32768", "float32:64x32768", "bfloat16:1024x262144", "float32:1024x262144",
          "bfloat16:2048x131072", "float32:2048x131072", "bfloat16:4096x65536", "float32:4096x65536"]
CONFIGS = [(256, 4, 0), (512, 4, 0), (512, 4, 4)]
args = sys.argv[1:]
out_path = args[0]
shapes = args[args.index("--shapes") + 1:] if "--shapes" in args else SHAPES
compile_cu(SRC, arch_of_current_gpu())
copy = copy_gbps()
print(f"copy {copy:.0f} GB/s", flush=True)
results = {"copy_gbps": copy, "gpu": torch.cuda.get_device_name(), "shapes": []}
for spec in shapes:
    dt, mn = spec.split(":")
    m, n = map(int, mn.split("x"))
    dtype = getattr(torch, dt)
    tag = ci.DTYPE_TAG[dtype]
    x = torch.randn(m, n, device="cuda", dtype=dtype) * 3
    ref = torch.softmax(x.double(), -1)
    out = torch.empty_like(x)
    nbytes = 2 * x.numel() * x.element_size()
    row = {"dtype": dt, "M": m, "N": n, "runs": []}
    print(spec, flush=True)

    def record(label, fn, check=True):
        out.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        if check:
            err = (out.double() - ref).abs().max().item()
            tol = 1e-2 if dtype != torch.float32 else 1e-5
            if not err <= tol * ref.abs().max().item() + 1e-6:
                print(f"  {label}: WRONG max err {err:.3g}", flush=True)
                row["runs"].append({"label": label, "wrong": err})
                return
        us = time_us(fn, warmup_ms=10, rep_ms=40)
        pct = 100 * nbytes / us / 1e3 / copy
        print(f"  {label:34s} {us:9.2f} us {pct:5.1f}%", flush=True)
        row["runs"].append({"label": label, "us": us, "pct_copy": pct})

    record("cuda (tuned)", lambda: ci.rows_best(x, out))
    src = torch.empty_like(x)
    record("copy torch", lambda: out.copy_(src), check=False)
    words = nbytes // 2 // 16
    for h in range(5):
        kc = load_kernel(SRC, f"xc_h{h}")
        record(f"copy h{h}", lambda: kc.launch(132 * 16, 256, ptr(x), ptr(out), np.int64(words)),
               check=False)
    v = 16 // x.element_size()
    for t_, k, s in CONFIGS:
        for c in (4, 8, 16):
            cap = t_ * (k + s) * c * v
            if cap < n or cap >= 2 * n:
                continue
            for h in range(5):
                name = (f"softmax_v10_t{t_}_k{k}_s{s}_c{c}_{tag}" if h == 0
                        else f"xs_t{t_}_k{k}_s{s}_c{c}_h{h}_{tag}")
                kern = load_kernel(V10 if h == 0 else SRC, name)
                shared = ci._dynamic_shared(kern, 16 * s * t_) if s else 0
                record(name, lambda: ci._cluster_per_row(kern, x, out, t_, c, shared_bytes=shared))
    results["shapes"].append(row)
    json.dump(results, open(out_path, "w"), indent=1)
