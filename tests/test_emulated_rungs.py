"""The lab's own SIMT rungs of both ladders, run in the CUDA C emulator on a CPU: softmax v0 to
v4 and v6, GEMM v0 to v7, every configuration each compiles, on shapes that fill no tile and
rows that start off a 16-byte boundary, against float64. Their launchers run as they do on a
GPU, with the emulator's kernels in place of the bridge's and a stand-in GPU (no tuned table, no
clusters). The rungs that need a GPU (clusters, cp.async, Tensor Cores, TMA) are refused by
name. On a GPU the same rungs run in tests/test_cuda_rungs.py and the GPU suites."""

from __future__ import annotations

import shutil
from functools import lru_cache

import pytest
import torch

from phase24.bridge.launch import Gpu
from phase24.emulator import CompileError, build

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (a host compiler)"),
              pytest.mark.skipif(torch.cuda.is_available(), reason="the GPU runs the rungs")]
STAND_IN = Gpu(0, "emulated", (8, 0), 132, 227 * 1024)
TOL = {torch.float32: 5e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


@lru_cache(maxsize=None)
def _library(folder, source):
    return build(folder / source, (f"-I{folder}",))


@pytest.fixture
def emulated(monkeypatch):
    from phase24.gemm.cuda import launchers as gemm
    from phase24.softmax.cuda import launchers as softmax

    for ladder in (softmax, gemm):
        monkeypatch.setattr(ladder, "_kernel", lambda source, name, d=ladder.SOURCE_DIR:
                            _library(d, source).kernel(name))
    monkeypatch.setattr(softmax, "tuned_config", lambda kind, x2d: None)
    monkeypatch.setattr(softmax, "has_clusters", lambda device=None: False)
    monkeypatch.setattr(gemm, "gpu", lambda device=None: STAND_IN)
    monkeypatch.setattr(gemm, "tuned_entry", lambda a, b: (None, None, {}))
    return softmax, gemm


def _rows(m: int, n: int, dtype) -> torch.Tensor:
    """m rows of n values, 4 bytes into a wider tensor (off 16-byte alignment, strided)."""
    x = (torch.randn(m, n + 3) * 4).to(dtype)[:, 1:n + 1]
    x[0, 0], x[-1, -1] = float("inf") if m > 2 else x[0, 0], -1e4
    return x


def _check_softmax(launch, x, *config):
    out = torch.full(x.shape, float("nan"), dtype=x.dtype)
    launch(x, out, *config)
    want = torch.softmax(x.double(), -1)
    torch.testing.assert_close(out.double(), want, rtol=TOL[x.dtype], atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("kind", ["v0", "v1", "v2", "v3"])
@pytest.mark.parametrize("dtype", list(TOL))
def test_a_softmax_rung_is_right_emulated(emulated, kind, dtype):
    softmax, _ = emulated
    for m, n in [(3, 1000), (2, 37), (1, 4099)]:
        _check_softmax(getattr(softmax, f"rows_{kind}"), _rows(m, n, dtype))


@pytest.mark.parametrize("kind", ["v4", "v6"])
def test_every_configuration_of_a_grouped_softmax_rung_is_right_emulated(emulated, kind):
    from phase24.softmax.cuda.configs import capacity, configs

    softmax, _ = emulated
    for dtype in TOL:
        for config in configs(kind, dtype)[:: 1 if dtype == torch.float32 else 4]:
            n = capacity(kind, config, dtype) - 3
            _check_softmax(getattr(softmax, f"rows_{kind}"), _rows(3, n, dtype), config)


@pytest.mark.parametrize("kind", ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"])
def test_every_configuration_of_a_gemm_rung_is_right_emulated(emulated, kind):
    from phase24.gemm.cuda.configs import configs, tile

    _, gemm = emulated
    for config in configs(kind) or [()]:
        rows, cols = tile(kind, config) if config else (16, 16)
        m, n, k = rows + 3, cols + 5, 37
        for dtype in TOL if config == (configs(kind) or [()])[0] else [torch.float32]:
            a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
            c = torch.full((m, n), float("nan"), dtype=dtype)
            gemm.run(kind, config, a, b, c)
            want = a.double() @ b.double()
            torch.testing.assert_close(c.double(), want, rtol=TOL[dtype], atol=TOL[dtype] * k)


@pytest.mark.parametrize("folder,rung,said", [
    ("softmax", "v5_cluster.cu", "thread-block clusters"),
    ("gemm", "v8_mma.cu", "inline PTX `cp.async.cg.shared.global [%0], [%1], 16, %2;`"),
    ("gemm", "v9_wgmma.cu", "it needs a GPU"),
])
def test_a_rung_that_needs_a_gpu_is_refused_by_name(folder, rung, said):
    from phase24.core.provenance import REPO

    d = REPO / "src" / "phase24" / folder / "cuda"
    with pytest.raises(CompileError) as err:
        build(d / rung, (f"-I{d}",))
    assert said in str(err.value) and "needs a GPU" in str(err.value), err.value
