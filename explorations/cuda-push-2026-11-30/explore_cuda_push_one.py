"""Run one kernel a few times (for ncu): python scripts/explore_cuda_push_one.py dtype MxN (cuda | KERNEL_NAME)"""
import re, sys
import torch
from phase24.softmax import cuda_impls as ci
from phase24.bridge.launch import load_kernel
dt, mn, what = sys.argv[1:4]
m, n = map(int, mn.split("x"))
x = torch.randn(m, n, device="cuda", dtype=getattr(torch, dt))
out = torch.empty_like(x)
if what == "cuda":
    fn = lambda: ci.rows_best(x, out)
else:
    t, k, c = map(int, re.match(r"x_t(\d+)_k(\d+)_c(\d+)", what).groups())
    kern = load_kernel("scripts/explore_cuda_push.cu", what)
    fn = lambda: ci._cluster_per_row(kern, x, out, t, c)
for _ in range(3):
    fn()
torch.cuda.synchronize()
