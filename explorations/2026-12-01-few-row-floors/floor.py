# What a launch, a cluster launch, a copy and a softmax's bare shape (loads held, one barrier,
# stores) cost on few-row shapes under the bench's timing, GPU time and host-included, beside
# torch's copy_ and `cuda` (H200). PYTHONPATH=src python3 explorations/2026-12-01-few-row-floors/floor.py
import torch, numpy as np
from pathlib import Path
from phase24.bridge.launch import load_kernel
from phase24.harness.bench import time_us
import phase24.softmax as S
src = Path(__file__).parent / "floor.cu"
k = {n: load_kernel(src, n) for n in ("empty_k", "empty_c16", "empty_c8", "copy_k", "copy_c16", "copy_c8", "hold_c16", "hold_bar")}
k["empty_c16"].allow_cluster(16); k["copy_c16"].allow_cluster(16); k["hold_c16"].allow_cluster(16)
f = S.IMPLEMENTATIONS["cuda"]
for dt, m, n in ((torch.float32, 1, 32768), (torch.bfloat16, 1, 32768), (torch.float32, 8, 131072), (torch.float32, 64, 32768)):
    x = torch.randn(m, n, device="cuda", dtype=dt); y = torch.empty_like(x)
    n4 = x.numel() * x.element_size() // 16
    r = {}
    for host in (False, True):
        h = "host" if host else "gpu"
        r[h + " torch copy_"] = time_us(lambda: y.copy_(x), host=host)
        r[h + " empty 1x32"] = time_us(lambda: k["empty_k"].launch(1, 32, x, y, np.int64(n4)), host=host)
        r[h + " empty 16x256"] = time_us(lambda: k["empty_k"].launch(16, 256, x, y, np.int64(n4)), host=host)
        r[h + " empty c8 x16"] = time_us(lambda: k["empty_c8"].launch(16, 256, x, y, np.int64(n4)), host=host)
        r[h + " empty c16 x16"] = time_us(lambda: k["empty_c16"].launch(16, 256, x, y, np.int64(n4)), host=host)
        for g in (16, 32, 64, 128):
            r[h + f" copy_k {g}x256"] = time_us(lambda: k["copy_k"].launch(g, 256, x, y, np.int64(n4)), host=host)
        r[h + " copy_c16 x16*m"] = time_us(lambda: k["copy_c16"].launch(16 * m, 256, x, y, np.int64(n4)), host=host)
        if n4 % 512 == 0 and n4 // 512 % 16 == 0:
            r[h + " hold_c16"] = time_us(lambda: k["hold_c16"].launch(n4 // 512, 256, x, y, np.int64(n4)), host=host)
            r[h + " hold_bar"] = time_us(lambda: k["hold_bar"].launch(n4 // 512, 256, x, y, np.int64(n4)), host=host)
        r[h + " softmax cuda"] = time_us(lambda: f(x), host=host)
    print(str(dt).split(".")[1], f"{m}x{n}", flush=True)
    for kk, v in r.items(): print(f"   {kk:24s} {v:6.2f}", flush=True)
