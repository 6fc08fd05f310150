"""The GEMM operation on a CPU: its registry and argument checks, its float64 reference and error
bound (which a correct float32 product passes and a missing tile, TF32 inputs or a bfloat16
accumulator fail), its cases and shapes, its plot, and the commands taking it by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from phase24.gemm import IMPLEMENTATIONS, GemmArgumentError
from phase24.gemm.args import check_inputs, entry
from phase24.gemm.shapes import parse_shape, shapes
from phase24.harness.ops import get

ROOT = Path(__file__).resolve().parents[1]
OP = get("gemm")


def operands(m, n, k, dtype=torch.float32, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, k, generator=g).to(dtype), torch.randn(k, n, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_a_float32_sum_rounded_once_passes(dtype):
    a, b = operands(33, 65, 2049, dtype)
    c = (a.double() @ b.double()).float().to(dtype)  # float32 result, rounded once
    assert OP.compare(c, OP.reference(a, b), dtype).why == ""


def tf32(t):
    return (t.view(torch.int32) & ~0x1FFF).view(torch.float32)


@pytest.mark.parametrize("wrong,dtype", [
    (lambda a, b: a[:, :-8] @ b[:-8], torch.float32),                 # a tile of K left out
    (lambda a, b: tf32(a) @ tf32(b), torch.float32),                   # TF32 products
    (lambda a, b: a @ b + 1e-3, torch.float32),                        # a small bias
])
def test_wrong_products_fail(wrong, dtype):
    a, b = operands(20, 30, 129, dtype)
    out = wrong(a, b)
    why = OP.compare(out, OP.reference(a, b), dtype).why
    assert why, "the bound let a wrong product pass"


def test_a_bfloat16_accumulator_fails():
    a, b = operands(16, 24, 257, torch.bfloat16)
    acc = torch.zeros(16, 24, dtype=torch.bfloat16)
    for k in range(257):
        acc = (acc.float() + a[:, k:k + 1].float() * b[k:k + 1].float()).bfloat16()
    assert OP.compare(acc, OP.reference(a, b), torch.bfloat16).why


def test_nan_and_inf_must_be_where_float64_has_them():
    (case,) = [c for c in OP.cases(False) if "NaN" in c.name]
    a, b = case.make(torch.float32, "cpu", torch.Generator().manual_seed(0))
    ref = OP.reference(a, b)
    good = a @ b
    assert OP.compare(good, ref, torch.float32).why == ""
    bad = good.clone()
    bad[1] = 0.0
    assert "NaN" in OP.compare(bad, ref, torch.float32).why


def test_every_case_makes_fresh_operands_of_its_shape():
    for case in OP.cases(True):
        if case.gpu_only or "x4096" in case.name or "2048" in case.name:
            continue
        a, b = case.make(torch.float32, "cpu", torch.Generator().manual_seed(3))
        m, n, k = (int(v) for v in case.name.split()[0].split("x"))
        assert a.shape == (m, k) and b.shape == (k, n), case.name
        if a.numel() and b.numel():
            assert (a != 0).float().mean() > 0.99 and (a != a.round()).float().mean() > 0.9


@pytest.mark.parametrize("a,b,said", [
    (torch.ones(3, 4), torch.ones(5, 6), "inner dimensions differ"),
    (torch.ones(3, 4), torch.ones(4, 6, dtype=torch.float16), "give both one dtype"),
    (torch.ones(2, 3, 4), torch.ones(4, 6), "3 dimensions"),
    (torch.ones(3, 4, dtype=torch.float64), torch.ones(4, 6, dtype=torch.float64), "float64"),
    (torch.ones(3, 4), "b", "must be a torch.Tensor"),
    (torch.ones(3, 4), torch.ones(4, 6), "runs on a CUDA GPU"),
])
def test_bad_operands_get_one_clear_line(a, b, said):
    with pytest.raises(GemmArgumentError, match=said):
        check_inputs(a, b, "cuda-x")


def test_entry_copies_what_a_kernel_cannot_read_and_fills_out():
    seen = []

    def kernel(a, b, c):
        seen.append((a.is_contiguous(), b.is_contiguous()))
        c.copy_(a @ b)

    f = entry("k", kernel, allow_cpu=True)
    a, b = operands(6, 5, 7)
    out = torch.full((6, 5), float("nan"))
    assert f(a.t().contiguous().t(), b[:, :], out) is out
    assert torch.allclose(out, a @ b) and seen == [(True, True)]
    assert torch.equal(f(a[:, :0], b[:0]), torch.zeros(6, 5))  # K = 0: an empty sum
    with pytest.raises(GemmArgumentError, match="out must be"):
        f(a, b, torch.empty(5, 6))


def test_shapes_and_their_parser():
    assert (4096, 11008, 4096) in shapes() and (1, 4096, 4096) in shapes()
    assert parse_shape("16x4096x14336") == (16, 4096, 14336)
    for bad in ("banana", "4x4", "0x4x4"):
        with pytest.raises(ValueError, match="bad shape"):
            parse_shape(bad)


def test_the_registry_has_cublas_first():
    assert next(iter(IMPLEMENTATIONS)) == "cublas"


def test_the_plot_draws_tflops_per_shape(tmp_path):
    recs = [dict(impl=i, dtype="float32", M=s, N=s, K=s, tflops=t)
            for i, s, t in (("cublas", 256, 10.0), ("cublas", 512, 30.0), ("cuda-naive", 256, 1.0))]
    path = OP.plot({"gpu": "X", "date": "2026-12-02", "records": recs}, tmp_path / "g.png")
    assert path.stat().st_size > 10_000


def test_check_gemm_runs_on_a_cpu_and_says_what_needs_a_gpu():
    done = subprocess.run([sys.executable, "-m", "phase24", "check", "gemm", "--impl", "cublas"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "cublas" in out and "GPU" in out, out


def test_the_default_sweep_leaves_the_slowest_rungs_out_of_the_largest_shapes():
    from phase24.gemm.spec import OP

    assert OP.not_swept("cuda-naive", (4096, 4096, 4096))
    assert OP.not_swept("cuda-v1", (4096, 4096, 11008))
    assert OP.not_swept("cuda-naive", (2048, 2048, 2048)) is None
    assert all(OP.not_swept(name, (8192, 8192, 8192)) is None
               for name in ("cublas", "cuda", "cuda-v6", "triton", "triton-naive"))
