"""Where a measurement comes from: the GPU, its driver, the versions, the commit, the date."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def gpu_info() -> dict:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"gpu": props.name, "sms": props.multi_processor_count, "driver": driver_version()}


def driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0]
    except Exception:
        return "unknown"


def versions() -> dict:
    import torch
    import triton

    v = {"python": platform.python_version(), "torch": torch.__version__,
         "triton": triton.__version__, "cuda_runtime": torch.version.cuda}
    try:
        import cuda.core

        v["cuda_core"] = cuda.core.__version__
    except Exception:
        v["cuda_core"] = None
    try:
        from phase24.bridge.nvcc import nvcc_version

        v["nvcc"] = nvcc_version()
    except Exception:
        v["nvcc"] = None
    return v


def git_commit() -> str:
    """HEAD of the repository (PHASE24_COMMIT when the tree was copied without .git)."""
    if os.environ.get("PHASE24_COMMIT"):
        return os.environ["PHASE24_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except Exception:
        return "unknown"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def gpu_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200'; the folder under results/."""
    words = [w for w in name.lower().replace("nvidia", "").split() if w]
    return "-".join(words) or "gpu"


def stamp() -> dict:
    """The fields every result file of a GPU run starts with."""
    info = gpu_info()
    return {"gpu": info["gpu"], "sms": info["sms"], "driver": info["driver"],
            "versions": versions(), "commit": git_commit(), "date": now()}
