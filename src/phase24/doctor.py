"""`phase24 doctor`: what this machine has, and what will and will not work on it."""

from __future__ import annotations

import platform
import shutil
import subprocess


def _try(fn, default="not available"):
    try:
        return fn()
    except Exception as err:  # a missing piece is a line of the report, not a crash
        return f"{default} ({type(err).__name__}: {str(err).splitlines()[0][:80]})"


def _ncu_counters() -> str:
    ncu = shutil.which("ncu")
    if not ncu:
        return "no: ncu is not installed (read the recorded profiles under results/)"
    import torch

    if not torch.cuda.is_available():
        return "no: there is no GPU"
    probe = ("import torch; x=torch.randn(1024, device='cuda'); torch.softmax(x, -1); "
             "torch.cuda.synchronize()")
    out = subprocess.run([ncu, "--clock-control", "none", "--metrics", "gpu__time_duration.sum",
                          "-c", "1", "python3", "-c", probe], capture_output=True, text=True,
                         timeout=300)
    text = out.stdout + out.stderr
    if "ERR_NVGPUCTRPERM" in text or "permission" in text.lower():
        return "no: counters are locked on this machine (ERR_NVGPUCTRPERM)"
    return "yes" if "gpu__time_duration" in text else f"no: {text.strip().splitlines()[-1][:100]}"


def _triton_launch() -> str:
    """Which launch the softmax Triton rungs' repeat calls take on this Triton."""
    import triton

    from phase24.softmax.triton.common import KNOWN_TRITON, REPLAY_KNOWN

    if REPLAY_KNOWN:
        return f"direct: Triton {triton.__version__}'s launcher, called with the bound arguments"
    return (f"Triton's own kernel[grid] on every call: the direct launch knows Triton "
            f"{', '.join(v + 'x' for v in KNOWN_TRITON)}, not {triton.__version__} (slower per "
            "call, the same results)")


def report(check_ncu: bool = True) -> list[tuple[str, str]]:
    import torch

    rows = [("python", platform.python_version()), ("torch", torch.__version__)]
    rows.append(("triton", _try(lambda: __import__("triton").__version__)))
    rows.append(("cuda.core", _try(lambda: __import__("cuda.core", fromlist=["x"]).__version__)))

    from phase24.bridge.nvcc import nvcc_path, nvcc_version

    rows.append(("nvcc", _try(lambda: f"{nvcc_version()} at {nvcc_path()}")))
    from phase24.bridge.cache import cache_dir

    rows.append(("kernel cache", _try(lambda: str(cache_dir()))))
    rows.append(("host C++ compiler (emulator)", _try(_host_compiler)))
    gpu = torch.cuda.is_available()
    if gpu:
        from phase24.core.provenance import driver_version

        rows += _gpus()
        rows.append(("driver", driver_version()))
        rows.append(("ncu reads counters", _try(_ncu_counters) if check_ncu else "not checked"))
    else:
        rows.append(("GPU", "none"))
    rows += _what_works(gpu, rows)
    return rows


def _gpus() -> list[tuple[str, str]]:
    """Each GPU and the build of the lab's kernels it runs."""
    import torch

    from phase24.bridge.launch import gpu
    from phase24.bridge.nvcc import PORTABLE, UnsupportedGpuError

    rows = []
    count = torch.cuda.device_count()
    for i in range(count):
        g, p = gpu(i), torch.cuda.get_device_properties(i)
        try:
            target = g.target
            runs = (f"runs the portable PTX ({PORTABLE}, compiled by the driver): every rung but "
                    "the cluster ones" if target == PORTABLE else f"runs the {target} cubins")
        except UnsupportedGpuError as err:
            runs = f"NO: {err}"
        suffix = f" {i}" if count > 1 else ""
        rows += [(f"GPU{suffix}", f"{g.name}, {g.sm_count} SMs, {p.total_memory / 2**30:.0f} GiB"),
                 (f"compute capability{suffix}", f"{g.capability[0]}.{g.capability[1]} -> {runs}")]
    return rows


def _what_works(gpu: bool, rows) -> list[tuple[str, str]]:
    have = dict(rows)
    nvcc = not have["nvcc"].startswith("not available")
    triton = not have["triton"].startswith("not available")
    out = [
        ("compile .cu + ptxas reports", "works" if nvcc else
         "NO: no nvcc (bash scripts/setup.sh installs NVIDIA's nvcc wheels into .venv where pip "
         "can reach them; or install the CUDA toolkit)"),
        ("run CUDA C kernels", "works" if gpu and nvcc else _emulated(have)),
        ("Triton kernels", ("works on the GPU" if gpu else
                            "in Triton's interpreter, nothing to set (small shapes)")
         if triton else "NO: triton is not installed"),
        ("Triton launches (softmax)", ("" if gpu else "on a GPU: ") + _triton_launch()
         if triton else "-"),
        ("thread-block clusters (cuda-v5)", "works" if gpu and _any_clusters() else
         "no (needs Hopper, sm_90)"),
        ("a decided call (cuda, triton)", _fastcall() if gpu else "no GPU: nothing to launch"),
        ("tuned tables", _tuned(gpu)),
        ("benchmark", "works" if gpu else "no: shows the last recorded H200 results instead"),
        ("MiniGPT (NumPy, PyTorch CPU)", "works"),
    ]
    return out


def _tuned(gpu: bool) -> str:
    """Which ladders have a tuned table for this GPU (without one, a ladder's untuned choices);
    with no GPU, the GPUs the tables were measured on."""
    import torch

    from phase24.core import tuned
    from phase24.harness.ops import OPERATIONS
    from phase24.harness.tune import LADDERS, table

    ladders = {f"{op} {ladder}": tuned.gpus(table(op, ladder))
               for op in sorted(OPERATIONS) for ladder in LADDERS}
    if not gpu:
        return "measured on " + ", ".join(sorted({g for gs in ladders.values() for g in gs}))
    name = torch.cuda.get_device_name()
    missing = [k for k, gs in ladders.items() if name not in gs]
    if not missing:
        return f"all four for {name}"
    tune = " and ".join(f"`python -m phase24 tune {op}`" for op in sorted({k.split()[0]
                                                                          for k in missing}))
    return f"none for {name} in {', '.join(missing)}: untuned choices there ({tune} makes them)"


def _host_compiler() -> str:
    from phase24.emulator.build import INSTALL, compiler

    cxx = compiler()
    if cxx is None:
        return f"not available: {INSTALL}"
    said = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
    return f"{(said.stdout.splitlines() or ['?'])[0]} at {shutil.which(cxx) or cxx}"


def _emulated(have: dict) -> str:
    if have["host C++ compiler (emulator)"].startswith("not available"):
        return "NO: needs an NVIDIA GPU, or a host C++ compiler for the emulator (see above)"
    return "emulated on the CPU (check --file, hello): correctness and counts, no timing"


def _fastcall() -> str:
    from phase24.bridge import fastcall

    return "made " + fastcall.status()


def _any_clusters() -> bool:
    import torch

    from phase24.bridge.launch import gpu

    return any(gpu(i).clusters for i in range(torch.cuda.device_count()))
