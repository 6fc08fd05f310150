"""Training throughput (tokens/s) of the same model: NumPy (CPU), PyTorch (CPU), PyTorch (GPU)."""

from __future__ import annotations

import json
import os
import platform
import time

import numpy as np

from . import data
from . import numpy_model as nm
from .config import GPTConfig, TrainConfig
from .train import Runner


def measure(impl: str, device: str, cfg: GPTConfig, tc: TrainConfig, dtype: str, steps: int, warmup: int,
            repeats: int = 3) -> float:
    """Median over `repeats` timed blocks of `steps` training steps (forward, backward, AdamW)."""
    params = nm.init_params(cfg, tc.seed)
    run = Runner(impl, cfg, tc, params, None, device, dtype)
    bs = data.batches(data.load_corpus(), tc.batch_size, cfg.block_size, warmup + steps, tc.data_seed)
    for x, y in bs[:warmup]:
        run.step(x, y)
    run.sync()
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for x, y in bs[warmup:]:
            run.step(x, y)  # loss.item() synchronises each step, as a training loop does
        run.sync()
        rates.append(steps * tc.batch_size * cfg.block_size / (time.perf_counter() - t0))
    return float(np.median(rates))


def speed(cfg: GPTConfig | None = None, tc: TrainConfig | None = None, dtype: str = "float32", steps: int = 20,
          gpu_steps: int = 200, warmup: int = 3, backends=None, json_path=None, console=None) -> dict:
    import torch
    from rich.console import Console

    con = console or Console()
    cfg, tc = cfg or GPTConfig(), tc or TrainConfig()
    backends = backends or ["numpy-cpu", "torch-cpu", "torch-cuda"]
    res = {"config": json.loads(cfg.to_json()), "batch_size": tc.batch_size, "dtype": dtype,
           "tokens_per_step": tc.batch_size * cfg.block_size, "cpu": platform.processor() or platform.machine(),
           "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
           "numpy": np.__version__, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
           "repeats": 3, "tokens_per_s": {}}
    for b in backends:
        impl, dev = b.split("-")
        if dev == "cuda" and not torch.cuda.is_available():
            con.print(f"{b}: skipped (no CUDA device)")
            res["tokens_per_s"][b] = None
            continue
        n = gpu_steps if dev == "cuda" else steps
        tps = measure(impl, dev, cfg, tc, dtype, n, warmup)
        res["tokens_per_s"][b] = tps
        con.print(f"{b:10s} {tps:12,.0f} tokens/s  (median of 3 x {n} training steps of "
                  f"{tc.batch_size}x{cfg.block_size} tokens, {dtype})")
    if json_path:
        os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
        with open(json_path, "w") as f:
            json.dump(res, f, indent=2)
        con.print(f"written: {json_path}")
    return res
