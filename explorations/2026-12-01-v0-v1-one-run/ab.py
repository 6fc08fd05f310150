# v0 and v1 as at e437d3f, as at 35b7a6c ("main") and with run_sum's one-run path (1ced889,
# "fast"), side by side in one device call. Each tree was made first with
#   git archive REV src/phase24/kernels | tar x --strip-components=3 -C kernels-REV  (in this folder)
# and each kernel is timed twice, interleaved, keeping the better.
import torch, numpy as np, json
from pathlib import Path
from phase24.bridge.launch import load_kernel
from phase24.harness.bench import time_us
HERE = Path(__file__).parent
TAG = {torch.float32: "f32", torch.bfloat16: "bf16"}
old = {(r["impl"], r["dtype"], r["M"], r["N"]): r["us"] for r in json.load(open("results/h200/history/softmax-e437d3f.json"))["records"]}
FILES = {"v0": "softmax_v0_naive.cu", "v1": "softmax_v1_block_smem.cu"}
SHAPES = {"v1": [128, 256, 512, 1024, 2048, 4096, 8192, 16384], "v0": [256, 512, 1024, 2048]}
for rung in ("v1", "v0"):
    for dt in (torch.float32, torch.bfloat16):
        ks = {v: load_kernel(HERE / f"kernels-{rev}" / FILES[rung], f"softmax_{rung}_{TAG[dt]}")
              for v, rev in (("e437d3f", "e437d3f"), ("main", "35b7a6c"), ("fast", "1ced889"))}
        for n in SHAPES[rung]:
            m = 2**28 // n
            x = torch.randn(m, n, device="cuda").mul_(3).to(dt); out = torch.empty_like(x)
            grid, block = (m, 256) if rung == "v1" else ((m + 127) // 128, 128)
            r = {}
            for rep in range(2):  # interleaved twice: the better of two
                for v, k in ks.items():
                    us = time_us(lambda: k.launch(grid, block, x, out, np.int64(m), np.int32(n), np.int64(n)), warmup_ms=5, rep_ms=40)
                    r[v] = min(r.get(v, 1e30), us)
            ref = torch.softmax(x.float(), -1)
            err = (out.float() - ref).abs().max().item()
            e = old.get(("cuda-naive" if rung == "v0" else "cuda-v1", str(dt).split(".")[1], m, n))
            print(rung, TAG[dt], f"{m}x{n}", " ".join(f"{v} {u:.1f}" for v, u in r.items()),
                  f"| main/e437 {r['main']/r['e437d3f']-1:+.1%} fast/e437 {r['fast']/r['e437d3f']-1:+.1%} | committed e437 {e} | err {err:.1e}", flush=True)
            del x, out
