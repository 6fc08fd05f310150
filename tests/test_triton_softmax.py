"""Triton softmax (``triton-naive``, ``triton``, a learner's file): correctness on every path.

Without a GPU the kernels run in Triton's interpreter. Triton picks interpreter or compiler when
it is first imported, so ``test_interpreter_suite`` runs this file again in a subprocess with
TRITON_INTERPRET=1 set from the start; there the tests that use the ``interp`` fixture run (in
the parent process they are skipped). To run them directly:
``TRITON_INTERPRET=1 python -m pytest tests/test_triton_softmax.py``. Small plans force
each path of ``triton`` (short rows, persistent rows, split rows in one or several chunks, the
fused split) on small shapes. Tests marked ``gpu`` run the same checks on a CUDA GPU at the
standard sweep's row lengths, with fewer rows.

Every check compares with a float64 reference by relative error and an elementwise bound, checks
that rows sum to 1, that NaN rows are exactly the reference's NaN rows, and (where the row kernel
is called directly) that no element of a NaN-poisoned output is left unwritten.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from phase24.softmax import SoftmaxArgumentError, softmax_reference
from phase24.softmax import triton_impls as T
from phase24.softmax.args import triton_interpreter_active

INTERP = triton_interpreter_active()  # at import, i.e. before this process imported triton

pytestmark = pytest.mark.skipif(not T.TRITON_AVAILABLE, reason="triton is not installed")

ROOT = Path(__file__).resolve().parents[1]
STARTER = ROOT / "labs" / "starters" / "my_softmax.py"

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# (relative error of the whole output, elementwise relative bound, elementwise absolute floor)
# Rounding the float32 result to float16 / bfloat16 costs up to 2^-11 / 2^-8 relative.
TOL = {torch.float32: (2e-6, 1e-5, 1e-30),
       torch.float16: (1e-3, 1e-3, 1e-7),
       torch.bfloat16: (6e-3, 8e-3, 1e-30)}

# Small plans that reach each path of `triton` on small shapes.
PLANS = {
    "short": T.Plan("rows", block_m=4),                                  # 4 rows per tile
    "persistent": T.Plan("rows", block_m=2, per_sm=1, num_stages=2),     # grid < tiles: loop
    "split": T.Plan("split", seg=16, s_max=3, mode="twopass"),           # S<=3, >1 chunk each
    "split-1chunk": T.Plan("split", seg=32, s_max=64, mode="twopass"),   # one chunk per program
    "split-fused": T.Plan("split", seg=16, s_max=1, mode="fused"),       # tickets, wait, re-read
    "looped": T.Plan("looped", seg=16, per_sm=1),                        # grid < rows, chunks
    "looped-capped": T.Plan("looped", seg=32, per_sm=2, l2_mb=0, hints=False),
    # One program in the interpreter: rows of <= 2 chunks wait successfully, longer ones give up
    # and take the slow way after the loop (spin_limit polls).
    "lagged": T.Plan("lagged", seg=64),
    "lagged-gives-up": T.Plan("lagged", seg=16, spin_limit=2),
}
PATHS = ["naive", "default", *PLANS]


def run(path: str, x: torch.Tensor) -> torch.Tensor:
    if path == "naive":
        return T.triton_softmax_naive(x)
    if path == "default":
        return T.triton_softmax(x)
    return T.triton_softmax(x, plan=PLANS[path])


def row_kernel(path: str):
    if path == "naive":
        return T.naive_rows
    if path == "default":
        return T.softmax_rows
    return lambda a, o: T.softmax_rows(a, o, PLANS[path])


def assert_softmax(out: torch.Tensor, x: torch.Tensor, what: str = "") -> None:
    assert out.shape == x.shape and out.dtype == x.dtype, what
    ref = softmax_reference(x).cpu()
    got = out.detach().to(torch.float64).cpu()
    nan_ref = ref.isnan()
    assert torch.equal(got.isnan(), nan_ref), f"{what}: NaN pattern differs from torch's"
    ok = ~nan_ref.any(dim=-1) if ref.dim() else ~nan_ref
    r, g = ref[ok], got[ok]
    if r.numel() == 0:
        return
    rel_all, rel_elem, atol = TOL[x.dtype]
    # Rounding the exact result to the output dtype is an error no kernel can avoid (fp16 rows
    # of 3M values are mostly subnormals): it is allowed on top of the tolerance.
    rounded = r.to(x.dtype).to(torch.float64)
    floor = ((rounded - r).norm() / r.norm()).item()
    rel = ((g - r).norm() / r.norm()).item()
    assert rel <= rel_all + floor, f"{what}: relative error {rel:.3g} > {rel_all:.3g} + {floor:.3g}"
    bad = (g - r).abs() > rel_elem * r.abs() + atol
    assert not bad.any(), f"{what}: {int(bad.sum())} elements out of bounds"
    n = x.shape[-1]
    sums = g.reshape(-1, n).sum(-1)
    want = ref.to(x.dtype).to(torch.float64)[ok].reshape(-1, n).sum(-1)  # the rounded result's
    assert torch.allclose(sums, want, atol=rel_elem * 2 + n * 1e-7), \
        f"{what}: row sums {sums.min().item():.6g}..{sums.max().item():.6g}"


def randn(shape, dtype, seed, device="cpu", scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype).to(device)


@pytest.fixture
def interp():
    if not INTERP:
        pytest.skip("runs in the TRITON_INTERPRET=1 subprocess of test_interpreter_suite")


@pytest.mark.skipif(INTERP, reason="this is the interpreter run already")
def test_interpreter_suite():
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-m", "not gpu", "-p", "no:cacheprovider",
         "-W", "ignore::RuntimeWarning"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        "interpreter tests failed:\n" + proc.stdout[-8000:] + proc.stderr[-2000:])
    print(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- interpreter (CPU) tests ----

SHAPES = [(5, 1), (4, 2), (3, 3), (7, 37), (6, 100), (2, 257)]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_paths_match_float64(interp, path, dtype):
    for i, shape in enumerate(SHAPES):
        x = randn(shape, dtype, seed=1000 + i)
        assert_softmax(run(path, x), x, f"{path} {dtype} {shape} seed {1000 + i}")


@pytest.mark.parametrize("path", PATHS)
def test_rows_not_16_byte_aligned(interp, path):
    # x[:, 1:] of a (M, N + 1) tensor: row stride N + 1, rows start at odd element offsets.
    for dtype in (torch.float32, torch.bfloat16):
        base = randn((6, 71), dtype, seed=7)
        x = base[:, 1:]
        assert x.stride() == (71, 1)
        assert_softmax(run(path, x), x, f"{path} {dtype} sliced")
        wide = randn((3, 300), dtype, seed=8)[:, 3:103]  # row stride 3x the row length
        assert_softmax(run(path, wide), wide, f"{path} {dtype} strided")


@pytest.mark.parametrize("path", PATHS)
def test_special_values(interp, path):
    n = 70
    x = randn((7, n), torch.float32, seed=11)
    x[0] = float("-inf")                    # whole row -inf: NaN like torch
    x[1, 5] = float("nan")                  # NaN in a row: whole row NaN
    x[2, :40] = float("-inf")               # leading chunks all -inf, finite tail
    x[3, 10] = 1e30                         # huge finite value: one-hot
    x[4] = 1e30; x[4, 3] = -1e30            # noqa: E702  huge equal values
    x[5, -1] = float("inf")                 # +inf: NaN like torch
    x[6, 50:] = float("-inf")               # trailing chunks all -inf
    out = run(path, x)
    assert_softmax(out, x, f"{path} special values")
    assert out[3, 10].item() == 1.0
    for dtype in (torch.float16, torch.bfloat16):
        xd = x.clone()
        xd[3, 10] = 6e4; xd[4] = 6e4; xd[4, 3] = -6e4  # noqa: E702  within float16's range
        xd = xd.to(dtype)
        assert_softmax(run(path, xd), xd, f"{path} {dtype} special values")


@pytest.mark.parametrize("path", PATHS)
def test_every_output_element_written(interp, path):
    for dtype in (torch.float32, torch.bfloat16):
        x = randn((9, 45), dtype, seed=21)
        out = torch.full_like(x, float("nan"))
        row_kernel(path)(x, out)
        assert not out.isnan().any(), f"{path} {dtype}: unwritten elements"
        assert_softmax(out, x, f"{path} {dtype} poisoned output")


def test_shapes_and_layouts(interp):
    for f in (T.triton_softmax, T.triton_softmax_naive):
        assert f(torch.empty(0, 5)).shape == (0, 5)
        assert f(torch.empty(4, 0)).shape == (4, 0)
        assert f(torch.empty(2, 0, 3)).shape == (2, 0, 3)
        x3 = randn((2, 3, 33), torch.float32, seed=31)
        assert_softmax(f(x3), x3, "3-d")
        x1 = randn((19,), torch.bfloat16, seed=32)
        assert_softmax(f(x1), x1, "1-d")
        xt = randn((40, 6), torch.float32, seed=33).t()  # last dim not contiguous
        assert_softmax(f(xt), xt, "transposed")


def test_split_combine_many_partials(interp):
    # More partials per row (44) than one step of the combine (16): it loops over 3 steps.
    x = randn((2, 700), torch.float32, seed=41)
    x[1, 650] = 100.0  # the row maximum sits in the last step (exp(100) overflows float32
    #                    if a combine takes its maximum from the first steps only)
    assert T._split_shape(700, 16, 1000) == (44, 1)
    for mode in ("twopass", "fused"):
        plan = T.Plan("split", seg=16, s_max=1000, mode=mode, pblock=16)
        if mode == "fused":  # fused in the interpreter: one program per row, many chunks
            plan = replace(plan, s_max=1, seg=16)
        assert_softmax(T.triton_softmax(x, plan=plan), x, f"44 partials {mode}")


@pytest.fixture
def builds(monkeypatch):
    """The plans `_build` makes launchers for, recorded while the test runs."""
    plans = []
    orig = T._build

    def spy(plan, x2d, sms, env=(), out_align=0):
        plans.append(plan)
        return orig(plan, x2d, sms, env, out_align)
    monkeypatch.setattr(T, "_build", spy)
    return plans


@pytest.mark.parametrize("path", PATHS)
def test_float32_accumulation(interp, path):
    # 1024 values near 0: the sum of exp is ~1024, where bfloat16 steps by 8, so a sum kept in
    # bfloat16 is off by several percent (under Triton 3.6's interpreter, which adds bfloat16
    # values as raw bit patterns, by far more). (NumPy, under the interpreter, sums float16 in
    # float32, so float16 would not show it.)
    x = randn((3, 1024), torch.bfloat16, seed=71, scale=0.05)
    assert_softmax(run(path, x), x, f"{path} long bfloat16 rows")


def test_looped_grid_capped_by_l2_budget(interp, builds):
    # l2_mb caps the programs in flight so that their rows fit in that many MB: under 1 MB, rows
    # of 65536 float32 (256 KB) leave 4 programs, rows of 262144 (1 MB) one program striding
    # over every row; with no cap (0), the grid is per_sm x SMs (4 SMs in the interpreter), or
    # the rows if fewer. Each result checked too.
    for m, n, l2_mb, grid in ((9, 65536, 1, 4), (3, 262144, 1, 1), (3, 262144, 0, 3),
                              (9, 65536, 0, 8)):
        x = randn((m, n), torch.float32, seed=81 + n)
        x[1] = float("-inf")
        x[2, : n - 10] = float("-inf")               # only the last chunk finite
        plan = T.Plan("looped", seg=8192, per_sm=2, l2_mb=l2_mb)
        assert_softmax(T.triton_softmax(x, plan=plan), x, f"looped l2_mb={l2_mb} {m}x{n}")
        grids = {steps[0].grid[0] for key, launcher in T._LAUNCHERS.items()
                 if key[3] == x.shape and key[-1] == plan for steps, _ in launcher.bound.values()}
        assert grids == {grid}, (m, n, l2_mb, grids)
    builds.clear()
    xb = randn((3, 40), torch.bfloat16, seed=82)
    assert_softmax(T.triton_softmax(xb, plan=T.Plan("looped", seg=16, per_sm=1, l2_mb=1)), xb)
    assert builds and builds[0].path == "looped"


def test_fused_split_cannot_wait_in_interpreter_and_says_so_with_nan(interp):
    # The interpreter runs programs one after another: a fused split with S > 1 would wait
    # forever for a peer; the bounded wait gives up and writes NaN instead of hanging.
    x = randn((2, 64), torch.float32, seed=51)
    out = T.triton_softmax(x, plan=T.Plan("split", seg=16, s_max=4, mode="fused", spin_limit=3))
    assert out[:, :48].isnan().all()      # programs 0-2 of each row gave up
    assert not out[:, 48:].isnan().any()  # the last one found every partial in


def test_dispatch_thresholds():
    sms = 132
    assert T.default_plan(1 << 21, 128, 4, sms).path == "rows"
    assert T.default_plan(1 << 21, 128, 4, sms).block_m > 1          # several rows per tile
    p = T.default_plan(8192, 32768, 4, sms)
    assert p.path == "rows" and p.block_m == 1 and p.per_sm > 0      # persistent medium
    # Bulk long rows: the Gluon ring kernel on a GPU, the two-launch split in the interpreter.
    assert T.default_plan(1024, 262144, 4, sms).path == ("split" if INTERP else "ring")
    # Few long rows: the lagged kernel on a GPU, the split in the interpreter (one program
    # there: the lagged kernel would take its slow way); beyond LAGGED_MAX_S chunks, the split.
    few_long = "split" if INTERP else "lagged"
    assert T.default_plan(8, 131072, 2, sms).path == few_long
    assert T.default_plan(1, 1 << 24, 4, sms).path == "split"        # no limit on N
    for elem in (4, 2):                                               # few rows that fit: rows
        assert T.default_plan(1, 32768, elem, sms).path == "rows"
        assert T.default_plan(64, 32768, elem, sms).num_warps == 32
        assert T.default_plan(64, 65536, elem, sms).path == few_long
    assert T.default_plan(8192, 32768, 2, sms).path == "rows"        # bf16 32768: rows
    assert T.default_plan(8, 131072, 4, sms)._mode() in ("twopass", os.environ.get(
        "PHASE24_TRITON_SPLIT_MODE", "twopass"))                      # no waiting by default
    bulk = T.candidate_plans(1024, 262144, 2, sms)
    assert {"split", "looped", "lagged"} <= {c.path for c in bulk}
    assert ("ring" in {c.path for c in bulk}) == (not INTERP and T.gluon_available())
    for elem in (4, 2):
        for n in (128, 1000, 4096, 32768, 65536, 262144, 3 << 20):
            for m in (1, 64, 4096, 1 << 20):
                cands = T.candidate_plans(m, n, elem, sms)
                assert cands[0] == T.default_plan(m, n, elem, sms)
                for c in cands:
                    if c.path == "split":
                        s, cpp = T._split_shape(n, c.seg, c.s_max or sms)
                        assert s <= sms and s * cpp * c.seg >= n  # no deadlock, all covered
                        assert (s - 1) * cpp * c.seg < n          # no empty program
                    if c.path in ("lagged", "ring"):              # one read of the partials
                        assert T._cdiv(n, c.seg) <= T.LAGGED_MAX_S
                    assert c.num_warps in (1, 2, 4, 8, 16, 32)


@pytest.mark.skipif(not T.gluon_available(), reason="this Triton has no Gluon")
def test_whole_row_candidates(monkeypatch):
    # The whole-row plans the autotuner tries (as on a GPU): one program per row for rows of
    # 16384 values or more up to WHOLE_ROW_MAX_BYTES; groups of 4 to 32 programs, one slice of
    # WHOLE_ROW_SLICE_BYTES each, for longer rows; every plan's chunk made of whole copies by
    # every thread, and two slices (or one row) within an H100/H200 block's shared memory.
    monkeypatch.setattr(T, "triton_interpreter_active", lambda: False)
    def splits(n, elem):
        return sorted({p.split for p in T._whole_row_plans(n, elem)})
    assert splits(16000, 2) == [] and splits(16384, 2) == [1] and splits(32768, 2) == [1]
    assert splits(65536, 2) == [1, 4] and splits(262144, 2) == [16]
    assert splits(262144, 4) == [32] and splits(1 << 20, 2) == []   # at most 32 programs a row
    assert splits(3 * 65536, 2) == [12]                               # 384 KB: not one program
    for elem in (4, 2):
        for n in (16384, 32768, 65536, 98304, 131072, 262144):
            for p in T._whole_row_plans(n, elem):
                assert p.seg % (32 * p.num_warps * 16 // elem) == 0, p
                held = 1 if p.split == 1 else 2
                assert held * T._cdiv(T._cdiv(n, p.split), p.seg) * p.seg * elem <= 227 * 1024 - 1024
                assert p.split == 1 or n % (p.split * p.seg) == 0, p     # every slice full
    assert any(p.path == "wholerow" for p in T.candidate_plans(4096, 65536, 2, 132))


@pytest.mark.skipif(not T.gluon_available(), reason="this Triton has no Gluon")
@pytest.mark.skipif(INTERP, reason="compiles: runs in the parent process, not the interpreter's")
def test_ring_kernel_compiles_for_ampere_ada_hopper():
    # Without a GPU: ring_kernel compiled (Triton's own ptxas) for sm_80, sm_89 and sm_90 in
    # every ring plan, with N and the row stride of unknown divisibility, as most shapes are:
    # every copy must still be one 16-byte cp.async (no 2-byte copies: those do not exist),
    # every store 16 bytes, and the ring must fit in Ada's 99 KB of shared memory per block;
    # with segments of one chunk and of two.
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from phase24.softmax.gluon_kernels import ring_kernel

    ints = {"M": "i32", "N": "i32", "stride_x": "i32", "S": "i32", "WAIT_NS": "i32"}
    for cc in (80, 89, 90):
        for dt, elem in (("fp32", 4), ("bf16", 2), ("fp16", 2)):
            for (seg, warps, lag, ahead), group in itertools.product(T.RING_CONFIGS[elem], (1, 2)):
                sig = {"x_ptr": f"*{dt}", "out_ptr": f"*{dt}", "ws_ptr": "*i64", **ints,
                       **dict.fromkeys(["SEG", "VEC", "LAG", "AHEAD", "PBLOCK", "EVEN", "FOLD",
                                        "GROUP"], "constexpr")}
                consts = dict(SEG=seg, VEC=16 // elem, LAG=lag, AHEAD=ahead, PBLOCK=64,
                              EVEN=False, FOLD=elem == 2, GROUP=group)
                aligned = {(i,): [["tt.divisibility", 16]] for i in range(3)}  # the pointers
                k = triton.compile(GluonASTSource(ring_kernel, sig, consts, aligned),
                                   target=GPUTarget("cuda", cc, 32), options={"num_warps": warps})
                ptx, what = k.asm["ptx"], f"sm_{cc} {dt} {seg} {warps} {lag} {ahead} {group}"
                copies = [ln for ln in ptx.splitlines() if "cp.async.cg.shared.global" in ln]
                assert copies and all(", 0x10," in ln for ln in copies), what
                stores = [ln for ln in ptx.splitlines() if "st.global" in ln and "b64" not in ln]
                assert any("st.global.v4" in ln for ln in stores), what
                assert k.metadata.shared <= 99 * 1024, what
                if elem == 2 and seg == 4096 and cc == 90:
                    assert "bar.red.and.pred" in ptx, what


@pytest.mark.skipif(not T.gluon_available(), reason="this Triton has no Gluon")
@pytest.mark.skipif(INTERP, reason="compiles: runs in the parent process, not the interpreter's")
def test_whole_row_kernel_compiles_for_ampere_ada_hopper():
    # Without a GPU, as for the ring kernel: whole_row_kernel compiled for sm_80, sm_89 and sm_90
    # in every whole-row plan, with slices of up to 96 KB (every target's shared memory holds
    # them), one program per row or four; every copy one 16-byte cp.async, every store 16 bytes.
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from phase24.softmax.gluon_kernels import whole_row_kernel

    for cc in (80, 89, 90):
        for dt, elem in (("fp32", 4), ("bf16", 2), ("fp16", 2)):
            for seg, warps in T.WHOLE_ROW_CONFIGS:
                for split in (1, 4):
                    sig = {"x_ptr": f"*{dt}", "out_ptr": f"*{dt}", "ws_ptr": "*i64", "M": "i32",
                           "N": "i32", "stride_x": "i32", "WAIT_NS": "i64",
                           **dict.fromkeys(["VEC", "R", "NCH", "SPLIT", "EVEN", "FOLD"],
                                           "constexpr")}
                    nch = max(1, 96 * 1024 // (seg * elem) // (1 if split == 1 else 2))
                    consts = dict(VEC=16 // elem, R=seg // (32 * warps * (16 // elem)), NCH=nch,
                                  SPLIT=split, EVEN=False, FOLD=elem == 2)
                    aligned = {(i,): [["tt.divisibility", 16]] for i in range(3)}  # pointers
                    k = triton.compile(GluonASTSource(whole_row_kernel, sig, consts, aligned),
                                       target=GPUTarget("cuda", cc, 32),
                                       options={"num_warps": warps})
                    ptx, what = k.asm["ptx"], f"sm_{cc} {dt} {seg} {warps} {nch} split {split}"
                    copies = [ln for ln in ptx.splitlines() if "cp.async.cg.shared.global" in ln]
                    assert copies and all(", 0x10," in ln for ln in copies), what
                    # the slices' stores: 16 bytes (the workspace's: 8)
                    stores = [ln for ln in ptx.splitlines()
                              if "st.global" in ln and "st.global.b64" not in ln]
                    assert stores and all("st.global.v4" in ln for ln in stores), (what, stores)
                    assert k.metadata.shared <= 99 * 1024, what


def test_launchers_are_cached_per_shape_stride_and_alignment(interp, builds):
    # A second call with the same (shape, stride, alignment, plan) builds nothing; another
    # stride or a misaligned start builds its own launcher; results stay right throughout.
    T.clear_launch_cache()
    builds.clear()
    base = randn((6, 101), torch.float32, seed=91)
    for x in (base[:, :100], base[:, :100], base[:, 1:], base[:, 1:], base[:, :100].clone()):
        assert_softmax(T.triton_softmax(x), x, "cached launcher")
        assert_softmax(T.triton_softmax_naive(x), x, "cached naive launcher")
    assert len(builds) == 6  # (strided aligned, strided misaligned, contiguous) x (triton, naive)
    plan = PLANS["split"]
    for _ in range(2):
        assert_softmax(T.triton_softmax(base, plan=plan), base, "cached split")
    assert len(builds) == 7
    # The split's workspace is kept per stream (here: none) and reused.
    (launcher,) = [v for k, v in T._LAUNCHERS.items() if k[-1] == plan]
    assert list(launcher.bound) == [None]


def test_launcher_rebuilt_when_its_environment_changes(interp, monkeypatch):
    x = randn((3, 50), torch.float32, seed=92)
    T.clear_launch_cache()
    T.triton_softmax(x)
    (launcher,) = T._LAUNCHERS.values()
    assert ("TRITON_INTERPRET", os.environ["TRITON_INTERPRET"]) in launcher.env
    assert launcher.current()
    monkeypatch.setenv("TRITON_INTERPRET", "yes")  # still the interpreter, another value
    assert not launcher.current()
    assert_softmax(T.triton_softmax(x), x, "rebuilt launcher")
    assert T._LAUNCHERS[next(iter(T._LAUNCHERS))] is not launcher


@pytest.mark.parametrize("path", ["default", "split", "split-fused", "looped", "naive"])
def test_direct_launch_passes_what_the_jit_would(interp, monkeypatch, path):
    # The GPU's direct launch (no GPU here: Triton's JIT and the compiled kernel are faked)
    # must give the compiled launcher every kernel parameter after (x, out), constexprs
    # included, in the kernel's order, with the same grid and stream as the JIT launch.
    x = randn((4, 64), torch.float32, seed=93)
    out = torch.empty_like(x)
    launches = []

    class Compiled:
        function, packed_metadata = "cufunction", "packed"

        def run(self, g0, g1, g2, stream, function, packed, meta, enter, exit_, *args):
            launches.append(("direct", (g0, g1, g2), stream, args))

    class FakeJit:
        def __init__(self, real):
            self.arg_names = real.arg_names

        def run(self, *args, grid, warmup, **kw):
            assert not warmup
            params = dict(zip(self.arg_names, args))
            params.update({k: v for k, v in kw.items() if k in self.arg_names})
            launches.append(("jit", (grid[0], 1, 1), 7, tuple(params[a] for a in self.arg_names)))
            return Compiled()

    T.clear_launch_cache()
    if path == "naive":
        plan = T.Plan("naive", num_warps=4)
    else:
        plan = T.default_plan(4, 64, 4, 4) if path == "default" else PLANS[path]
    launcher = T._build(plan, x, 4)
    steps, _ = launcher.make()
    fake_steps = []
    for st in steps:
        st.fn = FakeJit(st.fn)
        fake_steps.append(st)
    launcher.make = lambda: (fake_steps, None)
    launcher.dev, launcher.direct = 0, True
    monkeypatch.setattr(T, "_raw_stream", lambda dev: 7)
    monkeypatch.setattr(T, "_no_launch_hooks", lambda: True)
    launcher(x, out)
    launcher(x, out)
    n = len(fake_steps)
    assert [k for k, *_ in launches] == ["jit"] * n + ["direct"] * n
    for jit, direct in zip(launches[:n], launches[n:]):
        assert jit[1:] == direct[1:]
    monkeypatch.setattr(T, "_no_launch_hooks", lambda: False)  # a profiler hook: JIT again
    launcher(x, out)
    assert [k for k, *_ in launches[2 * n:]] == ["jit"] * n


def test_benchmark_records_triton_plan():
    # The benchmark's `plan` field: triton's chosen_config, nothing for implementations that do
    # not pick a configuration per shape.
    from phase24.harness.bench import plan_of

    x = torch.empty(8, 100)
    assert plan_of("triton", x) == T.chosen_config(x)
    assert plan_of("torch", x) is None and plan_of("cuda", x) is None


def test_chosen_config_is_readable():
    text = T.chosen_config(torch.empty(8, 100))
    assert "rows_kernel" in text and ("interpreter" in text) == INTERP
    assert "split_kernel" in T.chosen_config(torch.empty(2, 1 << 20))


def test_errors(monkeypatch):
    # A CPU tensor without the interpreter is refused, naming the device (checked at call time).
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    for name, f in (("triton", T.triton_softmax), ("triton-naive", T.triton_softmax_naive)):
        with pytest.raises(SoftmaxArgumentError, match="device 'cpu'.*TRITON_INTERPRET"):
            f(torch.randn(4, 8))
        with pytest.raises(SoftmaxArgumentError, match="dtype torch.int32"):
            f(torch.ones(4, 8, dtype=torch.int32))
        with pytest.raises(SoftmaxArgumentError, match="0-d"):
            f(torch.tensor(1.0))
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the length is refused before any kernel runs
    with pytest.raises(SoftmaxArgumentError, match="one block"):
        T.triton_softmax_naive(torch.empty(1, T.NAIVE_MAX_N + 1))


# ------------------------------------------------------------------------ learner's file ----

LEARNER_OK = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=float("-inf"))
        x = x.to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty),
                 mask=cols < n)

    def softmax_rows(x2d, out):
        m, n = x2d.shape
        k[(m,)](x2d, out, n, x2d.stride(0), BLOCK=triton.next_power_of_2(n))
''')


def test_learner_file(interp, tmp_path):
    from phase24.softmax.learner_triton import LearnerFileError, load_learner_softmax

    good = tmp_path / "good_softmax.py"
    good.write_text(LEARNER_OK)
    f = load_learner_softmax(good)
    x = randn((5, 3, 40), torch.bfloat16, seed=61)[..., 1:]
    assert_softmax(f(x), x, "learner file")
    with pytest.raises(SoftmaxArgumentError, match="dtype"):
        f(torch.ones(2, 2, dtype=torch.int64))

    starter = load_learner_softmax(STARTER)           # the TODO copies x: it must fail
    x = randn((4, 30), torch.float32, seed=62)
    with pytest.raises(AssertionError):
        assert_softmax(starter(x), x, "starter")

    (tmp_path / "no_abi.py").write_text("x = 1\n")
    with pytest.raises(LearnerFileError, match="softmax_rows"):
        load_learner_softmax(tmp_path / "no_abi.py")
    (tmp_path / "broken.py").write_text("def softmax_rows(:\n")
    with pytest.raises(LearnerFileError, match="SyntaxError"):
        load_learner_softmax(tmp_path / "broken.py")
    with pytest.raises(LearnerFileError, match="no such file"):
        load_learner_softmax(tmp_path / "missing.py")


# ---------------------------------------------------------------------------- GPU tests ----

SWEEP_N = [128 << i for i in range(12)]  # 128 ... 262144
FEW_ROWS = [(1, 32768), (8, 131072), (64, 32768), (64, 262144)]


def _gpu_rows_with_specials(m, n, shift, dtype, seed):
    """(m, n) random rows starting `shift` values into a wider tensor (shift 1: rows not aligned),
    with special rows: all -inf, one NaN, finite only at the end, one +inf, half -inf and a NaN."""
    x = randn((m, n + shift), dtype, seed, device="cuda")[:, shift:]
    x[0] = float("-inf"); x[1, n // 3] = float("nan"); x[2, : n - 5] = float("-inf")  # noqa: E702
    x[3, 5] = float("inf"); x[4, : n // 2] = float("-inf"); x[4, -1] = float("nan")  # noqa: E702
    return x


def _gpu_check_poisoned(x, plan, what):
    """`plan` on x into a NaN-poisoned output, checked against the float64 reference."""
    out = torch.full_like(x, float("nan"))
    T.softmax_rows(x, out, plan)
    torch.cuda.synchronize()
    assert_softmax(out, x, what)


def _gpu_rows_per_wait_limit(monkeypatch, waits, shapes, dtype):
    """For each wait limit (LAGGED_WAIT_NS, set with the launcher cache emptied: a launcher keeps
    the limit it was built with) and each (m, n, shift) of shapes, the rows of
    _gpu_rows_with_specials: yields (wait_ns, m, n, shift, x)."""
    for wait_ns in waits:
        monkeypatch.setattr(T, "LAGGED_WAIT_NS", wait_ns)
        T.clear_launch_cache()
        for m, n, shift in shapes:
            yield wait_ns, m, n, shift, _gpu_rows_with_specials(m, n, shift, dtype, seed=m + n)
    T.clear_launch_cache()


def _gluon_on_gpu(monkeypatch, kernel, dtype):
    """Skips unless Gluon and a GPU of compute capability 8.0 or later are here; turns the
    interpreter off; returns dtype's element size."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    if not T.gluon_available() or torch.cuda.get_device_capability()[0] < 8:
        pytest.skip(f"the {kernel} needs Gluon and a GPU of compute capability 8.0 or later")
    return torch.empty(0, dtype=dtype).element_size()


def _gpu_check_relaunched(x, plan, what):
    """`plan` on x twice, then on other values through the same launcher (a workspace that is
    not zeroed between launches must not pass one launch's words to the next); returns the
    names of the kernels its launcher ran."""
    for _ in range(2):
        _gpu_check_poisoned(x, plan, what)
    n = x.shape[1]
    _gpu_check_poisoned(x[:, : n // 2].repeat(1, 2) if n % 2 == 0 else x * 0.5, plan,
                        f"{what}, again with other values")
    return {st.fn.__name__ for key, launcher in T._LAUNCHERS.items()
            if key[3] == x.shape and key[-1] == plan
            for steps, _ in launcher.bound.values() for st in steps}


def _gpu_case(f, shape, dtype, seed, what):
    x = randn(shape, dtype, seed, device="cuda")
    out = f(x)
    torch.cuda.synchronize()
    assert_softmax(out, x, f"{what} {tuple(shape)} {dtype} seed {seed}")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_sweep_every_candidate_plan(dtype, monkeypatch):
    # Every plan the autotuner may pick for the bulk sweep, on 137 rows (more than the SMs, so
    # persistent grids wrap around), plus the default dispatch at odd and few-row shapes.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("PHASE24_TRITON_AUTOTUNE", "0")  # the plans are forced or default here
    elem = torch.empty(0, dtype=dtype).element_size()
    sms = T._num_sms(torch.device("cuda"))
    for n in SWEEP_N:
        plans = T.candidate_plans((1 << 28) // n, n, elem, sms)
        if dtype == torch.float16:
            plans = plans[:1]
        for j, plan in enumerate(plans):
            _gpu_case(lambda x, p=plan: T.triton_softmax(x, plan=p), (137, n), dtype,
                      seed=n + j, what=plan.describe(n, sms))
        if n <= T.NAIVE_MAX_N:
            _gpu_case(T.triton_softmax_naive, (137, n), dtype, seed=n, what="naive")
    for shape in FEW_ROWS + [(3, 1), (5, 3), (300, 1000), (70, 4097), (9, 100003),
                             (2, 3 << 20)]:
        _gpu_case(T.triton_softmax, shape, dtype, seed=sum(shape), what="triton default")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_gpu_fused_split_waits_for_every_program(dtype, monkeypatch):
    # Programs of one launch wait for each other. The first version of that wait wrote NaN for
    # every program of a row but the last to arrive (H200, 2026-11-29): check every split plan
    # the dispatch may pick, forced to the fused mode, on few-row and long-row shapes, several
    # calls each (a race need not show on the first).
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("PHASE24_TRITON_AUTOTUNE", "0")
    elem = torch.empty(0, dtype=dtype).element_size()
    sms = T._num_sms(torch.device("cuda"))
    for m, n in FEW_ROWS + [(2 * sms + 5, 65536), (sms + 7, 262144)]:
        x = randn((m, n), dtype, seed=m + n, device="cuda")
        ref = softmax_reference(x)
        for plan in T.candidate_plans(m, n, elem, sms):
            if plan.path != "split":
                continue
            plan = replace(plan, mode="fused")
            what = f"{plan.describe(n, sms)} {m}x{n} {dtype}"
            for _ in range(3):
                out = T.triton_softmax(x, plan=plan)
                torch.cuda.synchronize()
                assert not (out.isnan() & ~ref.isnan()).any(), f"{what}: NaN written"
            sums = out.double().sum(-1)  # against the row sums of the rounded reference
            assert torch.allclose(sums, ref.to(dtype).double().sum(-1), atol=1e-3), what
            assert_softmax(out, x, what)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_looped_kernel(dtype, monkeypatch):
    # The looped kernel (capped and uncapped grids, with and without hints) on unaligned rows
    # with special values, more rows than programs.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    elem = torch.empty(0, dtype=dtype).element_size()
    plans = [T._looped_plan(elem, 2, 32), T._looped_plan(elem, 2, 0),
             T._looped_plan(elem, 1, 1, hints=False)]
    for n in (1000, 16384, 20000, 65536 - 3):
        x = _gpu_rows_with_specials(300, n, 1, dtype, seed=n)
        for plan in plans:
            _gpu_check_poisoned(x, plan, f"{plan.describe(n, 132)} {n} {dtype}")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_lagged_kernel(dtype, monkeypatch):
    # Every lagged plan on rows that are even and aligned (16-bit values in pairs) or not (odd
    # N, rows starting anywhere), with special values, more items than programs; then with a
    # wait limit of 0 ns, so that programs give up on peers and redo items the slow way.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    elem = torch.empty(0, dtype=dtype).element_size()
    plans = T._lagged_plans(262144, elem) + [T.Plan("lagged", seg=512, num_warps=1)]
    shapes = ((700, 65536, 0), (300, 20000 + 1, 1), (9, 262144, 0), (200, 4098, 1))
    for wait_ns, m, n, shift, x in _gpu_rows_per_wait_limit(
            monkeypatch, (T.LAGGED_WAIT_NS, 0), shapes, dtype):
        for plan in plans:
            for _ in range(2):
                _gpu_check_poisoned(x, plan, f"{plan.describe(n)} {m}x{n} shift {shift} "
                                             f"{dtype} wait {wait_ns} ns")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_ring_kernel(dtype, monkeypatch):
    # The Gluon ring kernel (both ring plans, and a small one with 2 warps, lag 1, ahead 1 and
    # segments of 2 chunks where a row has an even number of chunks) on rows that are whole
    # 16-byte copies (N a multiple of the chunk or not, not a multiple of 16 values), with
    # special values, more items than programs; rows that are not (odd N, rows starting
    # anywhere) take the lagged kernel instead, and are checked too. Then with a wait limit of
    # 0 ns: programs give up on peers and redo items the slow way.
    elem = _gluon_on_gpu(monkeypatch, "ring kernel", dtype)
    plans = T._ring_plans(262144, elem) + [T.Plan("ring", seg=2048, num_warps=2, lag=1, ahead=1,
                                                  group=2)]
    assert len(plans) == 3
    shapes = ((700, 65536, 0), (300, 20008, 0), (9, 262144, 0), (200, 3 * 4096 + 8, 0),
              (300, 20001, 1))
    for wait_ns, m, n, shift, x in _gpu_rows_per_wait_limit(
            monkeypatch, (T.LAGGED_WAIT_NS, 0), shapes, dtype):
        for plan in plans:
            kernels = _gpu_check_relaunched(x, plan, f"{plan.describe(n)} {m}x{n} shift "
                                                     f"{shift} {dtype} wait {wait_ns} ns")
            assert kernels == {"lagged_kernel" if shift else "ring_kernel"}, kernels


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_whole_row_kernel(dtype, monkeypatch):
    # The Gluon whole-row kernel (every one-program plan, and rows split across 4 and 3
    # programs) on rows that are whole 16-byte copies, a multiple of the chunk or not (a slice
    # may be partly or wholly past the row's end), with special values and more rows than
    # programs, run twice and then on other values through the same launcher; rows whose slice
    # does not fit in shared memory, or that are not whole 16-byte copies (odd N, rows starting
    # anywhere), run another plan and are checked too. Then the split plans with a wait limit
    # of 0 ns: programs give up on their group and read the row from DRAM.
    elem = _gluon_on_gpu(monkeypatch, "whole-row kernel", dtype)
    split = [T.Plan("wholerow", seg=4096, num_warps=8, split=4),
             T.Plan("wholerow", seg=8192, num_warps=16, split=3)]
    plans = [T.Plan("wholerow", seg=seg, num_warps=warps) for seg, warps in T.WHOLE_ROW_CONFIGS]
    smem = T._smem_per_block(torch.cuda.current_device())
    shapes = ((700, 32768, 0), (300, 20008, 0), (64, 65536, 0), (200, 3 * 8192 + 8, 0),
              (9, 262144, 0), (5, 1 << 20, 0), (300, 20001, 1))
    for wait_ns, m, n, shift, x in _gpu_rows_per_wait_limit(
            monkeypatch, (T.LAGGED_WAIT_NS, 0), shapes, dtype):
        for plan in plans + split if wait_ns else split:  # (no wait in one-program plans)
            what = f"{plan.describe(n)} {m}x{n} shift {shift} {dtype} wait {wait_ns} ns"
            kernels = _gpu_check_relaunched(x, plan, what)
            held = 1 if plan.split == 1 else 2  # rows a program holds at once
            slice_bytes = T._cdiv(T._cdiv(n, plan.split), plan.seg) * plan.seg * elem
            fits = held * slice_bytes + 1024 <= smem
            assert ("whole_row_kernel" in kernels) == (fits and not shift), (what, kernels)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_direct_launches_match_the_jit(monkeypatch):
    # Cached direct launches against Triton's JIT launches (PHASE24_TRITON_DIRECT=0), bit for
    # bit, on few-row and bulk shapes, alternating aligned and misaligned rows of one shape (the
    # launcher key holds the alignment Triton specialises on), on a second stream as well.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("PHASE24_TRITON_AUTOTUNE", "0")
    for dtype in (torch.float32, torch.bfloat16):
        for m, n in ((1, 32768), (8, 131072), (300, 1000), (200, 65536)):
            base = randn((m, n + 1), dtype, seed=m + n, device="cuda")
            dense = randn((m, n), dtype, seed=m + n + 1, device="cuda")  # (ring kernel: bulk)
            views = [base[:, :n], base[:, 1:], base[:, :n], base[:, 1:], dense]
            fns = [T.triton_softmax, T.triton_softmax_naive] if n <= T.NAIVE_MAX_N else \
                [T.triton_softmax]
            for f in fns:
                monkeypatch.setenv("PHASE24_TRITON_DIRECT", "0")
                T.clear_launch_cache()
                want = [f(v) for v in views]
                monkeypatch.setenv("PHASE24_TRITON_DIRECT", "1")  # the opt-in direct path
                T.clear_launch_cache()
                for _ in range(2):
                    for v, w in zip(views, want):
                        assert torch.equal(f(v), w), f"{f.__name__} {m}x{n} {dtype}"
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    got = [f(v) for v in views]
                side.synchronize()
                for g, w in zip(got, want):
                    assert torch.equal(g, w), f"{f.__name__} {m}x{n} {dtype} on a side stream"
    T.clear_launch_cache()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_edges_and_stress(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv("PHASE24_TRITON_AUTOTUNE", "0")  # the plans are forced or default here
    for dtype in (torch.float32, torch.bfloat16):
        for n in (100, 3000, 40000, 300000):
            base = randn((40, n + 1), dtype, seed=n, device="cuda")
            x = base[:, 1:]  # rows not 16-byte aligned
            for f in (T.triton_softmax, T.triton_softmax_naive):
                if f is T.triton_softmax_naive and n > T.NAIVE_MAX_N:
                    continue
                out = torch.full_like(x, float("nan"))
                T.softmax_rows(x, out) if f is T.triton_softmax else T.naive_rows(x, out)
                torch.cuda.synchronize()
                assert not out.isnan().any(), f"{f.__name__} {n}: unwritten elements"
                assert_softmax(out, x, f"{f.__name__} sliced {n}")
            xs = randn((6, n), dtype, seed=n + 1, device="cuda")
            xs[0] = float("-inf"); xs[1, n // 2] = float("nan")   # noqa: E702
            xs[2, : n // 2] = float("-inf"); xs[3, 7] = 6e4         # noqa: E702
            out = T.triton_softmax(xs)
            torch.cuda.synchronize()
            assert_softmax(out, xs, f"special values {n}")
    # Many rows, many programs per row, fused split: waits between programs under load.
    x = randn((3000, 65536), torch.bfloat16, seed=5, device="cuda")
    plan = T.Plan("split", seg=2048, num_warps=4, mode="fused")
    for _ in range(3):
        assert_softmax(T.triton_softmax(x, plan=plan), x, "fused split stress")
    # Fused and two-pass splits agree exactly (same arithmetic).
    y = randn((64, 262144), torch.float32, seed=6, device="cuda")
    a = T.triton_softmax(y, plan=T.Plan("split", seg=8192, num_warps=16, mode="fused"))
    b = T.triton_softmax(y, plan=T.Plan("split", seg=8192, num_warps=16, mode="twopass"))
    assert torch.equal(a, b)
    # M * N above 2^31 (int64 row offsets), only where memory allows.
    free, _ = torch.cuda.mem_get_info()
    if free > 12 * 2**30:
        big = torch.empty((1 << 16) + 3, 32768, dtype=torch.bfloat16, device="cuda")
        big.normal_()
        out = T.triton_softmax(big)
        tail = big[-3:]
        assert_softmax(out[-3:], tail, "rows past 2^31 elements")
        del big, out
