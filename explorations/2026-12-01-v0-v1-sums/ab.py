import math, sys, torch, numpy as np
from pathlib import Path
from phase24.bridge.launch import load_kernel
from phase24.harness.bench import time_us, BULK_NS, BULK_ELEMENTS
from phase24.softmax import cuda_impls as ci
TAG = {torch.float32: "f32", torch.bfloat16: "bf16"}
C = Path(__file__).parent  # .calls/ when it ran
variants = {
 "v1 RunSum": (Path("src/phase24/kernels/softmax_v1_block_smem.cu"), "softmax_v1_", lambda m: (m, 256)),
 "v1 plain": (C / "v1_plain.cu", "softmax_v1p_", lambda m: (m, 256)),
 "v1 comp": (C / "v1_comp.cu", "softmax_v1c_", lambda m: (m, 256)),
 "v0 RunSum": (Path("src/phase24/kernels/softmax_v0_naive.cu"), "softmax_v0_", lambda m: (math.ceil(m / 128), 128)),
 "v0 plain": (C / "v0_plain.cu", "softmax_v0p_", lambda m: (math.ceil(m / 128), 128)),
}
only = sys.argv[1:]
for dt in (torch.float32, torch.bfloat16):
    for n in BULK_NS:
        m = BULK_ELEMENTS // n
        x = torch.randn(m, n, device="cuda").mul_(3).to(dt); out = torch.empty_like(x)
        row = []
        for name, (src, pre, shape) in variants.items():
            if name.startswith("v0") and n not in (128, 1024, 8192, 262144): continue
            k = load_kernel(src, pre + TAG[dt]); g, b = shape(m)
            f = lambda: k.launch(g, b, x, out, np.int64(m), np.int32(n), np.int64(n))
            row.append(f"{name} {time_us(f, rep_ms=60):9.1f}")
        print(f"{TAG[dt]:4s} {m:>8d}x{n:<7d}", " | ".join(row), flush=True)
