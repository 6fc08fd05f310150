"""The tests' layers, by marker: ``gpu`` (a CUDA GPU: skipped, visibly, without one), ``nvcc``
(the CUDA compiler: skipped, visibly, without one), ``interpreter`` (Triton kernels in Triton's
interpreter, on a CPU) and ``slow``. Each machine runs its own set in one command:

    pytest                 # a CPU machine: everything that needs no GPU
    pytest -m nvcc         # what needs the compiler (builds, ptxas reports, the .cu grader)
    pytest -m gpu          # the H200 (scripts/gpu-session.sh runs it with its logs)

A test module is marked by the layer it exercises (LAYERS below); a test inside may add more.
"""

import os
import shutil

# In a pytest-xdist worker (test.sh starts one per core), the cores are shared out: each worker,
# and each process a test starts, gets cores / workers threads (one on a CPU machine). With a
# thread pool of every core in every process, torch's and OpenBLAS's threads only contend for
# cores the other workers already fill (a fifth of the grader tests' CPU time went there). Set
# before torch is imported; a value already set is kept, and a test that runs torch on more
# threads asks for them (minigpt's exact mode on two threads does).
if os.environ.get("PYTEST_XDIST_WORKER"):
    _threads = len(os.sched_getaffinity(0)) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", 1))
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, str(max(1, _threads)))

import pytest  # noqa: E402
import torch  # noqa: E402

LAYERS = {  # module -> markers every test of it gets
    "test_bridge": ("nvcc",), "test_bridge_cache": ("nvcc",), "test_cuda_rungs": ("nvcc",),
    "test_triton_ladder": ("interpreter",),
}


def pytest_collection_modifyitems(config, items):
    gpu = torch.cuda.is_available()
    nvcc = shutil.which("nvcc") is not None
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU (runs in scripts/gpu-session.sh)")
    no_nvcc = pytest.mark.skip(reason="needs nvcc, the CUDA compiler (not on the PATH here)")
    for item in items:
        for marker in LAYERS.get(item.module.__name__.rsplit(".", 1)[-1], ()):
            item.add_marker(marker)
        if "gpu" in item.keywords and not gpu:
            item.add_marker(no_gpu)
        elif "nvcc" in item.keywords and not nvcc:
            item.add_marker(no_nvcc)


_config = None


def pytest_configure(config):
    global _config
    _config = config


def pytest_runtest_logreport(report):
    """A failed test's reason, printed as it fails when PHASE24_FAILURES_AT_ONCE is set
    (scripts/gpu-session.sh sets it): pytest prints reasons in its summary at the end, which a
    step stopped by its time limit never reaches."""
    if report.failed and os.environ.get("PHASE24_FAILURES_AT_ONCE") and _config is not None:
        terminal = _config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(f"\n--- {report.nodeid} failed in {report.when}:")
            terminal.write_line(report.longreprtext[-4000:])
