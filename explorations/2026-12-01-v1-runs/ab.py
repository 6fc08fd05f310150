# v1 on bulk rows of 256-65536 in four versions, side by side, three interleaved rounds: e437d3f
# (a plain sum), 35b7a6c (one compensated addition per run of 32, even for one run), 52bf250
# ("head": run_sum's one-run path) and "f3" (52bf250 with one loop whose first run is not
# compensated: f3.patch). Each tree was made first with
#   git archive REV src/phase24/kernels | tar x --strip-components=3 -C kernels-NAME (in this folder)
# (f3: 52bf250's, then `patch -p1 < f3.patch` inside it). run1 is the same at 8192-65536 without f3.
import torch, numpy as np
from pathlib import Path
from phase24.bridge.launch import load_kernel
from phase24.harness.bench import time_us
HERE = Path(__file__).parent
TAG = {torch.float32: "f32", torch.bfloat16: "bf16"}
VS = ("e437d3f", "35b7a6c", "head", "f3")
for dt in (torch.bfloat16, torch.float32):
    ks = {v: load_kernel(HERE / f"kernels-{v}" / "softmax_v1_block_smem.cu", f"softmax_v1_{TAG[dt]}") for v in VS}
    for n in (256, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
        m = 2**28 // n
        x = torch.randn(m, n, device="cuda").mul_(3).to(dt); out = torch.empty_like(x)
        if n == 16384:
            ref = torch.softmax(x[:64].double(), -1)
            for v, k in ks.items():
                k.launch(64, 256, x, out, np.int64(64), np.int32(n), np.int64(n)); torch.cuda.synchronize()
                print(f"  check {TAG[dt]} {v} max abs err {(out[:64].double() - ref).abs().max().item():.2e}", flush=True)
        r = {v: [] for v in ks}
        for rep in range(3):
            for v, k in ks.items():
                r[v].append(time_us(lambda: k.launch(m, 256, x, out, np.int64(m), np.int32(n), np.int64(n)), warmup_ms=5, rep_ms=40))
        base = min(r["e437d3f"])
        print(TAG[dt], f"{m}x{n}", " ".join(f"{v} {min(u):.1f} ({min(u)/base-1:+.1%}) [{', '.join(f'{x:.0f}' for x in u)}]" for v, u in r.items()), flush=True)
