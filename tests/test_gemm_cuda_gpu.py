"""The CUDA C GEMM ladder on a GPU: every rung x dtype x the Op's cases against float64, with
poisoned outputs inside guard regions (harness/check.py); every compiled configuration forced on
shapes that are multiples of no tile, of every tile, and on operands off 16-byte boundaries; more
than 2^31 outputs; what `which` and the tuned table make `cuda` run. v9 (wgmma) is Hopper's:
these tests run on the H200, where every case of every rung runs."""

import pytest
import torch

from phase24.bridge.launch import recording
from phase24.gemm import IMPLEMENTATIONS
from phase24.gemm.args import entry
from phase24.gemm.cases import plain
from phase24.gemm.cuda import launchers as ci
from phase24.gemm.cuda import which
from phase24.gemm.cuda.configs import TUNABLE, compiled_for, configs, kernel_name, named, tile
from phase24.gemm.spec import OP
from phase24.core.cases import Case
from phase24.harness.check import check_case

pytestmark = pytest.mark.gpu
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
CASES = OP.cases(True)
CUDA = [name for name in IMPLEMENTATIONS if name == "cuda" or name.startswith("cuda-")]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", CUDA)
def test_every_case(name, dtype):
    bad = []
    for j, case in enumerate(CASES):
        v = check_case(OP, name, IMPLEMENTATIONS[name], case, dtype, "cuda", seed=100 + j)
        if not v.ok:
            bad.append(f"{case.name}: {v.why}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", CUDA)
def test_more_than_2_31_outputs(name, dtype):
    v = check_case(OP, name, IMPLEMENTATIONS[name], OP.big_case(), dtype, "cuda", seed=7)
    torch.cuda.empty_cache()
    assert v.ok, v.why


def _off16(t: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of ``t`` that starts one element past a 16-byte boundary."""
    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    return buf[1:].view(t.shape).copy_(t)


def _misaligned(fn):
    """``fn`` on contiguous operands and an output that each start off a 16-byte boundary: a
    16-byte rung must take its element-by-element path even where N and K are multiples of 8."""
    def matmul(a, b, out=None):
        c = _off16(torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device))
        fn(_off16(a), _off16(b), out=c)
        return c if out is None else out.copy_(c)
    return matmul


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", CUDA)
def test_operands_off_16_byte_boundaries(name, dtype):
    for j, (m, n, k) in enumerate(((33, 72, 48), (130, 136, 40), (5, 8, 8))):
        v = check_case(OP, name, _misaligned(IMPLEMENTATIONS[name]), plain(m, n, k), dtype,
                       "cuda", seed=300 + j)
        assert v.ok, f"{m}x{n}x{k}: {v.why}"


def _forced(kind, config):
    return entry(f"cuda-{kind}{config}", lambda a, b, c: ci.KINDS[kind](a, b, c, config=config))


def _tile_cases(kind, config) -> list[Case]:
    """Multiples of no tile; exact tiles with N and K multiples of 8 (the 16-byte path); partial
    tiles on that path (v8's and v9's cp.async zero-fills, no padded copies); one row; K shorter
    than one step of the sum."""
    bm, bn = tile(kind, config)
    bk = named(kind, config).get("BK", 8)
    return [plain(2 * bm + 3, 2 * bn + 5, 3 * bk + 3), plain(2 * bm, 2 * bn, 4 * bk),
            plain(bm + 8, bn + 24, 2 * bk + 8), plain(1, bn + 8, 5 * bk),
            plain(bm + 1, bn - 1, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind,config", [(k, c) for k in TUNABLE for c in configs(k)], ids=str)
def test_every_configuration(kind, config, dtype):
    fn = _forced(kind, config)
    for j, case in enumerate(_tile_cases(kind, config)):
        v = check_case(OP, f"{kind}{config}", fn, case, dtype, "cuda", seed=500 + j)
        assert v.ok, f"{case.name}: {v.why}"
    v = check_case(OP, f"{kind}{config} off 16 B", _misaligned(fn), plain(70, 72, 40), dtype,
                   "cuda", seed=599)
    assert v.ok, f"off 16-byte boundaries: {v.why}"


@pytest.mark.parametrize("sms", [1, 3])
@pytest.mark.parametrize("config", configs("v11"), ids=str)
def test_persistent_blocks_walk_every_tile(config, sms, monkeypatch):
    """v11 launches one block per SM: on 1 or 3 of them each block walks many tiles, its step
    counter running through every slot and round across them; every value is written and right,
    and the grid is min(tiles, SMs)."""
    monkeypatch.setattr(ci, "sm_count", lambda device=None: sms)
    fn = _forced("v11", config)
    bm, bn = tile("v11", config)
    for j, case in enumerate((plain(3 * bm + 5, 2 * bn + 8, 200), plain(2 * bm, 3 * bn, 448))):
        for dtype in (torch.bfloat16, torch.float16):
            v = check_case(OP, f"v11{config} on {sms} SMs", fn, case, dtype, "cuda", seed=700 + j)
            assert v.ok, f"{case.name}, {dtype}: {v.why}"
    a = torch.randn(3 * bm + 5, 200, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(200, 2 * bn + 8, device="cuda", dtype=torch.bfloat16)
    with recording() as seen:
        ci.KINDS["v11"](a, b, torch.empty(a.shape[0], b.shape[1], device="cuda",
                                          dtype=a.dtype), config=config)
    assert [grid for _, grid, _, _, _ in seen] == [min(4 * 3, sms)]


def test_a_configuration_that_is_not_compiled_is_refused():
    a = torch.randn(8, 8, device="cuda")
    with pytest.raises(ValueError, match="not compiled"):
        ci.gemm_v6(a, a, torch.empty_like(a), config=(16, 16, 16, 16, 16, 4, 4))


@pytest.mark.parametrize("name", CUDA)
def test_which_names_the_kernel(name):
    kind = name.removeprefix("cuda").removeprefix("-")
    dtype = torch.float32 if compiled_for(kind, torch.float32) else torch.bfloat16  # v8, v9
    a = torch.randn(300, 200, device="cuda", dtype=dtype)
    b = torch.randn(200, 100, device="cuda", dtype=dtype)
    said = which(a, b, name)
    tag = "bf16" if dtype == torch.bfloat16 else "f32"
    assert said.startswith(f"{name} gemm_v") and f"_{tag} (v" in said and "grid" in said, said


def test_cuda_follows_the_tuned_table(monkeypatch):
    a = torch.randn(96, 80, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(80, 112, device="cuda", dtype=torch.bfloat16)
    forced = ("v4", (64, 64, 8, 4, 4))
    monkeypatch.setattr(ci, "tuned", lambda gpu_name: {("bf16", 96, 112, 80): (*forced, {})})
    assert kernel_name(*forced, torch.bfloat16) in which(a, b, "cuda")
    wgmma = ("v9", configs("v9")[2])  # where the table says v9 is fastest, v9 runs
    monkeypatch.setattr(ci, "tuned", lambda gpu_name: {("bf16", 96, 112, 80): (*wgmma, {})})
    assert kernel_name(*wgmma, torch.bfloat16) in which(a, b, "cuda")
    monkeypatch.setattr(ci, "tuned", lambda gpu_name: {})
    assert "gemm_v8_" in which(a, b, "cuda")  # untuned, 16-bit: the Tensor Cores (mma.sync)
    assert "gemm_v7_" in which(a.float(), b.float(), "cuda")  # untuned, float32: v7
