"""The Triton GEMM rungs in Triton's interpreter, on a CPU: every rung on the Op's CPU cases in
float32 and float16 through the harness's checker (outputs poisoned with NaN and 42 inside guard
regions, inputs unchanged, two runs equal), forced configurations that reach each path (several
groups of tiles, a persistent walk over more tiles than programs, split-K with a short last
chunk), bfloat16 refused with a reason (the interpreter has no bfloat16 tl.dot), what which()
says, and two threads calling at once. tests/test_gemm_triton_gpu.py runs the rungs compiled."""

from __future__ import annotations


import pytest
import torch

from phase24.gemm import GemmArgumentError
from phase24.gemm.args import entry
from phase24.gemm.cases import plain
from phase24.gemm.triton import (IMPLEMENTATIONS, INTERPRETED, RUNGS, common, v1_grouped,
                                 v2_persistent, v3_splitk, which)
from phase24.harness.check import check_case
from phase24.harness.ops import get


def decide_forced(a, b, c, config=None):
    """v2's plan with its persistent kernel even in the interpreter (decide's ``force``)."""
    return v2_persistent.decide(a, b, c, config, force=True)


def forced(a, b, c, config=None) -> None:
    """The persistent kernel itself, in the interpreter too."""
    common.run(decide_forced, a, b, c, config)

pytestmark = [pytest.mark.interpreter,
              pytest.mark.skipif(not INTERPRETED, reason="the interpreter runs on CPUs")]
OP = get("gemm")
CASES = OP.cases(False)


def check_all(name, fn, dtype, cases=CASES, seed=10):
    bad = []
    for j, case in enumerate(cases):
        v = check_case(OP, name, fn, case, dtype, "cpu", seed=seed + j)
        if not v.ok:
            bad.append(f"{case.name}: {v.why}")
    assert not bad, f"{name} {dtype}:\n" + "\n".join(bad)


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_every_rung_on_every_cpu_case_float32(name):
    check_all(name, IMPLEMENTATIONS[name], torch.float32)


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_every_rung_on_cpu_cases_float16(name):
    # the interpreter's tl.dot multiplies float16 blocks in float32 (NumPy): these run and pass
    # (a few of the cases: float32 above takes them all)
    cases = [c for c in CASES if c.name.split()[0] in ("17x33x65", "1x96x80", "19x23x37",
                                                        "8x16x24", "5x3x1")]
    assert len(cases) == 5
    check_all(name, IMPLEMENTATIONS[name], torch.float16, cases, seed=50)


# Forced configurations: small tiles, so that the CPU shapes have several of them.
SMALL_V1 = v1_grouped.Config(16, 16, 16, group_m=2, num_warps=4, num_stages=2)
SMALL_V3 = v3_splitk.Config(16, 16, 16, split=3, num_warps=4, num_stages=2)
VECTOR_V3 = v3_splitk.Config(1, 16, 16, split=3, num_warps=4, num_stages=1)
FORCED = {
    # 3 x 5 tiles in groups of 2 rows (the last group has one): the grouped walk covers each once
    "v1-groups": (v1_grouped.matmul_tiles, SMALL_V1,
                  [plain(33, 65, 129), plain(48, 80, 32), plain(1, 96, 80), plain(7, 2, 9)]),
    # the persistent kernel itself (4 programs over up to 15 tiles); rows 16-byte multiples
    "v2-persistent": (forced, SMALL_V1,
                      [plain(33, 68, 132), plain(48, 80, 32), plain(1, 96, 80), plain(5, 4, 4)]),
    # K in 3 chunks of whole steps (the last short: 129 = 48 + 48 + 33), or even (96), or 1
    "v3-split": (v3_splitk.matmul_tiles, SMALL_V3,
                 [plain(33, 65, 129), plain(16, 40, 96), plain(1, 96, 80), plain(7, 2, 9),
                  plain(3, 5, 1)]),
    # one row: the vector kernel, K in 3 chunks (the last short), one chunk, N past its tiles;
    # more rows than one take the 16-row tile (7 x 2 x 9)
    "v3-vector": (v3_splitk.matmul_tiles, VECTOR_V3,
                  [plain(1, 65, 129), plain(1, 40, 96), plain(1, 96, 80), plain(1, 2, 9),
                   plain(1, 5, 1), plain(7, 2, 9)]),
}


@pytest.mark.parametrize("path", FORCED)
def test_forced_paths(path):
    tiles, config, cases = FORCED[path]
    fn = entry(path, lambda a, b, c: tiles(a, b, c, config), allow_cpu=True)
    check_all(path, fn, torch.float32, cases, seed=70)


def test_forced_paths_run_their_own_kernels():
    a, b = torch.randn(33, 132), torch.randn(132, 68)
    assert which(a, b, "triton-v2").endswith("[triton-v2: Triton's interpreter has no SMs to "
                                             "persist on; runs v1]")
    plan = decide_forced(a, b, None, SMALL_V1)
    assert plan.describe() == ("triton-v2 persistent_kernel[4](BLOCK_M=16, BLOCK_N=16, "
                               "BLOCK_K=16, GROUP_M=2, PROGRAMS=4, num_warps=4, num_stages=2)")
    b = torch.randn(132, 65)  # rows of 65 float32: not a multiple of 16 bytes
    assert "not a multiple of 16 bytes; runs v1" in decide_forced(a, b, None).note
    plan = v3_splitk.decide(torch.randn(33, 129), torch.randn(129, 65), None, SMALL_V3)
    assert plan.describe() == (
        "triton-v3 partial_kernel[15x3](BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, EVEN_K=False, "
        "num_warps=4, num_stages=2); then triton-v3 sum_kernel[3](BLOCK=1024, num_warps=4)")
    plan = v3_splitk.decide(torch.randn(1, 129), torch.randn(129, 65), None, VECTOR_V3)
    assert plan.describe() == (
        "triton-v3 vector_kernel[5x3](BLOCK_N=16, BLOCK_K=16, num_warps=4, num_stages=1); "
        "then triton-v3 sum_kernel[1](BLOCK=1024, num_warps=4)")
    plan = v3_splitk.decide(torch.randn(2, 129), torch.randn(129, 65), None, VECTOR_V3)
    assert plan.describe().startswith("triton-v3 partial_kernel[5x3](BLOCK_M=16, ")
    assert any(c.block_m == 1 for c in v3_splitk.candidates(1, 4096, 4096, 4, 232448, 132))
    assert not any(c.block_m == 1 for c in v3_splitk.candidates(2, 4096, 4096, 4, 232448, 132))


def test_a_nan_filled_output_is_overwritten_everywhere():
    a, b = torch.randn(37, 45), torch.randn(45, 70)
    for name, fn in IMPLEMENTATIONS.items():
        out = torch.full((37, 70), float("nan"))
        assert fn(a, b, out=out) is out
        assert not out.isnan().any(), name
        assert OP.compare(out, OP.reference(a, b), torch.float32).why == "", name


def test_bfloat16_is_refused_with_the_reason():
    a, b = torch.randn(8, 16).bfloat16(), torch.randn(16, 8).bfloat16()
    for name, fn in IMPLEMENTATIONS.items():
        with pytest.raises(GemmArgumentError, match="no bfloat16 tl.dot"):
            fn(a, b)
        assert which(a, b, name) == "refused: Triton's interpreter has no bfloat16 tl.dot"


def test_which_says_what_runs():
    a, b = torch.randn(33, 129), torch.randn(129, 65)
    assert which(a, b, "triton-naive") == (
        "triton-naive direct_kernel[2](BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, "
        "num_stages=1)")
    assert which(a, b, "triton-v1").startswith("triton-v1 grouped_kernel[")
    assert which(a, b, "triton") == which(a, b, "triton-v1")  # float32, M > 64: v1
    # a decode shape whose tiles leave the (interpreter's 4) SMs idle: split-K, two launches
    a, b = torch.randn(16, 2048), torch.randn(2048, 64)
    assert which(a, b, "triton") == which(a, b, "triton-v3")
    assert which(a, b, "triton").startswith("triton-v3 partial_kernel[1x8](")
    assert "; then triton-v3 sum_kernel[1](" in which(a, b, "triton")
    check_all("triton", IMPLEMENTATIONS["triton"], torch.float32, [plain(16, 64, 2048)])
    assert which(a.t().contiguous().t(), b, "triton-v1").endswith(
        "(after a row-major copy of a)")
    assert which(torch.randn(0, 3), torch.randn(3, 4), "triton") == \
        "nothing to launch (C is empty)"
    assert which(torch.randn(2, 0), torch.randn(0, 4), "triton").startswith("no kernel")
    for name in RUNGS:  # the benchmark's `plan` field is the same text
        assert OP.which(name, (a, b)) == which(a, b, name)


def test_the_tuned_table_keeps_the_larger_shape_of_a_class_and_is_read_back(tmp_path):
    from phase24.core import tuned
    from phase24.gemm.triton import common, tuning

    def shape(m, n, k, rung, us):
        return {"dtype": "bfloat16", "M": m, "N": n, "K": k,
                "best": {"rung": rung, "config": {"block_m": 64}, "us": us}}

    run = {"gpu": "NVIDIA H200", "shapes": [shape(4096, 11008, 4096, "triton-v2", 9.0),
                                             shape(4096, 16384, 4096, "triton-v1", 12.0),
                                             shape(1, 4096, 4096, "triton-v3", 3.0),
                                             {"dtype": "float32", "M": 8, "N": 8, "K": 8,
                                              "best": None}]}
    path = tmp_path / "t.json"
    tuning.write_table(run, path, "test")
    read = tuned.load(path, "NVIDIA H200", key=common._key, value=common._value)
    assert read == {("bf16", 4096, 16384, 4096): ("triton-v1", {"block_m": 64}),
                    ("bf16", 1, 4096, 4096): ("triton-v3", {"block_m": 64})}
    assert tuned.load(path, "another GPU", key=common._key, value=common._value) == {}


def test_which_refuses_a_name_that_is_no_implementation():
    import torch

    from phase24.gemm import which

    a = torch.randn(4, 4)
    assert which(a, a, impl="cublas") is None
    with pytest.raises(ValueError, match="unknown implementation 'cuda-v99' of gemm; choose from"):
        which(a, a, impl="cuda-v99")


def test_two_threads_in_cublas_leave_torchs_tf32_flags_as_they_found_them(monkeypatch):
    """Thread A enters, then B; A leaves first, B last: each restoring what it found would leave
    TF32 off (B found it off). The flags come back as the first caller found them."""
    import threading

    import torch

    from phase24.gemm import IMPLEMENTATIONS

    flags = torch.backends.cuda.matmul
    kept = flags.allow_tf32  # torch's flag is no plain attribute: monkeypatch cannot restore it
    flags.allow_tf32 = True
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    real = torch.matmul

    def staged(x, y, out=None):
        assert flags.allow_tf32 is False  # off inside, whichever thread
        if threading.current_thread().name == "A":
            a_in.set()
            assert b_in.wait(10)
        else:
            assert a_in.wait(10)
            b_in.set()
            assert a_out.wait(10)
        return real(x, y, out=out)

    monkeypatch.setattr(torch, "matmul", staged)
    x = torch.randn(4, 4)

    def run_a():
        IMPLEMENTATIONS["cublas"](x, x)
        a_out.set()

    threads = [threading.Thread(target=run_a, name="A"),
               threading.Thread(target=lambda: IMPLEMENTATIONS["cublas"](x, x), name="B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    found, flags.allow_tf32 = flags.allow_tf32, kept
    assert found is True
