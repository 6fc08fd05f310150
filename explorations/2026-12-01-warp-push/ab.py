# v10 against the warp-push variants (variants.cuh) on the eight few-row shapes: each checked
# against float64 (and on NaN / -inf rows against v10), swept over the compiled configurations
# (GPU time), then each variant's best, torch's copy_ and `cuda`, three rounds interleaved, GPU
# time and host-included.
import numpy as np
import torch
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from phase24.bridge.launch import load_kernel
from phase24.bridge.nvcc import compile_cu
from phase24.harness.bench import time_us
import phase24.softmax as S

here = Path(__file__).parent
VARS = (0, 1, 2)
with ThreadPoolExecutor(3) as ex:
    list(ex.map(lambda v: compile_cu(here / f"var{v}.cu", "sm_90a"), VARS))
TAG = {torch.float32: "f32", torch.bfloat16: "bf16"}
V = {torch.float32: 4, torch.bfloat16: 8}
CONFIGS = [(t, 4, 0, c) for c in (4, 8, 16) for t in (128, 256, 512, 1024)] + [(512, 4, 4, 16)]
_k = {}


def run(var, cfg, x, y):
    t, k, s, c = cfg
    key = (var, cfg, x.dtype)
    if key not in _k:
        _k[key] = load_kernel(here / f"var{var}.cu", f"x_t{t}_k{k}_s{s}_c{c}_{TAG[x.dtype]}")
        _k[key].allow_cluster(c)
        _k[key].set_attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES", max(1, 16 * s * t))
    m, n = x.shape
    _k[key].launch(m * c, t, x, y, np.int64(m), np.int32(n), np.int64(x.stride(0)), shared_bytes=16 * s * t)


def fits(var, cfg, n, dt):
    t, k, s, c = cfg
    return t * (k + s) * c * V[dt] >= n and not (var == 2 and s)


cuda = S.IMPLEMENTATIONS["cuda"]
FEW = [(dt, m, n) for dt in (torch.float32, torch.bfloat16) for m, n in ((1, 32768), (8, 131072), (64, 32768), (64, 262144))]
print("== check (max relative error against float64; NaN / -inf rows against v10)", flush=True)
bad = 0
for dt, m, n in FEW:
    x = (torch.randn(m, n, device="cuda") * 4).to(dt)
    if m > 1:
        x[0, 5] = float("nan"); x[1] = float("-inf"); x[2, 7] = float("inf"); x[3, :] = -1e30 if dt == torch.float32 else -3e38
    ref = torch.softmax(x.double(), -1)
    worst = {}
    for cfg in CONFIGS:
        outs = {}
        for var in VARS:
            if not fits(var, cfg, n, dt):
                continue
            y = torch.full_like(x, 7.0); run(var, cfg, x, y); torch.cuda.synchronize()
            outs[var] = y.double()
        for var, o in outs.items():
            same_nan = torch.equal(o.isnan(), outs[0].isnan())
            lo = 4 if m > 1 else 0
            err = ((o[lo:] - ref[lo:]).abs() / ref[lo:].abs()).max().item()
            same_special = m == 1 or torch.allclose(o[:lo].nan_to_num(5.0), outs[0][:lo].nan_to_num(5.0), rtol=1e-2, atol=1e-6)
            worst[var] = max(worst.get(var, 0), err)
            if not same_nan or not same_special or err > (1e-5 if dt == torch.float32 else 8e-3):
                bad += 1
                print("  MISMATCH", TAG[dt], m, n, cfg, var, same_nan, same_special, err, flush=True)
    print(f"  {TAG[dt]} {m}x{n} worst rel err " + " ".join(f"var{v} {e:.2e}" for v, e in worst.items()), flush=True)
print(f"  mismatches: {bad}", flush=True)
print("== sweep (GPU us)", flush=True)
best = {}
for dt, m, n in FEW:
    x = torch.randn(m, n, device="cuda").to(dt); y = torch.empty_like(x)
    for var in VARS:
        r = {cfg: time_us(lambda: run(var, cfg, x, y), warmup_ms=5, rep_ms=40) for cfg in CONFIGS if fits(var, cfg, n, dt)}
        b = min(r, key=r.get); best[(dt, m, n, var)] = b
        print(f"  {TAG[dt]} {m}x{n} var{var} best {b} {r[b]:.2f}  " + " ".join(f"{c[0]}/{c[2]}/{c[3]}:{u:.2f}" for c, u in sorted(r.items(), key=lambda i: i[1])[:5]), flush=True)
print("== rounds (median of 3; GPU us, then host-included us; % of copy_)", flush=True)
for dt, m, n in FEW:
    x = torch.randn(m, n, device="cuda").to(dt); y = torch.empty_like(x)
    fns = {"copy_": lambda: y.copy_(x), "cuda": lambda: cuda(x)}
    for var in VARS:
        fns[f"var{var}"] = (lambda v=var, c=best[(dt, m, n, var)]: run(v, c, x, y))
    for host in (False, True):
        r = {k: [] for k in fns}
        for rep in range(3):
            for k, f in fns.items():
                r[k].append(time_us(f, host=host))
        cp = np.median(r["copy_"])
        print(f"  {'host' if host else 'gpu '} {TAG[dt]} {m}x{n} " + " | ".join(f"{k} {np.median(u):.2f} ({100 * cp / np.median(u):.0f}%)" for k, u in r.items()), flush=True)
