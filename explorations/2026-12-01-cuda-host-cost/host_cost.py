import cProfile, pstats, time, torch
from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax import cuda_impls as ci
from phase24.harness import bench
from phase24.harness.bench import time_us
f = IMPLEMENTATIONS["cuda"]
z = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
print("flush us", time_us(lambda: z.zero_()))
for dt in (torch.float32, torch.bfloat16):
    for m, n in bench.FEW_ROW_SHAPES:
        x = torch.randn(m, n, device="cuda").to(dt)
        d = torch.empty_like(x)
        res = {}
        for name, fn in (("cuda", lambda: f(x)), ("copy", lambda: d.copy_(x)), ("triton", lambda: IMPLEMENTATIONS["triton"](x))):
            fn(); torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(300): fn()
            res[name] = (time.perf_counter() - t0) / 300 * 1e6
            torch.cuda.synchronize()
        print(dt, m, n, " ".join(f"{k} host/call {v:.1f}" for k, v in res.items()),
              f"gpu {time_us(lambda: f(x)):.2f} host_us {time_us(lambda: f(x), host=True):.2f} copy host_us {time_us(lambda: d.copy_(x), host=True):.2f}", ci.tuned_hit(x), flush=True)
x = torch.randn(1, 32768, device="cuda")
pr = cProfile.Profile(); pr.enable()
for _ in range(2000): f(x)
pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(25)
