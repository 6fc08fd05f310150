"""The Triton GEMM rungs compiled, on a GPU: every rung x dtype x the Op's GPU cases through the
harness's checker (poisoned, guarded outputs, inputs unchanged, two runs equal), C with more than
2^31 elements, forced split-K and small persistent tiles on decode and edge shapes, and on
Hopper the TMA kernel running (no fallback) where rows suit it."""

from __future__ import annotations

import pytest
import torch

from phase24.gemm.args import entry
from phase24.gemm.cases import big_case, plain, sliced
from phase24.gemm.triton import IMPLEMENTATIONS, v1_grouped, v2_persistent, v3_splitk, which
from phase24.harness.check import check_case
from phase24.harness.ops import get

pytestmark = pytest.mark.gpu
OP = get("gemm")
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def check_all(name, fn, dtype, cases, seed):
    bad = []
    for j, case in enumerate(cases):
        v = check_case(OP, name, fn, case, dtype, "cuda", seed=seed + j)
        if not v.ok:
            bad.append(f"{case.name}: {v.why}")
    assert not bad, f"{name} {dtype}:\n" + "\n".join(bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_every_case(name, dtype):
    check_all(name, IMPLEMENTATIONS[name], dtype, OP.cases(True), seed=100)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_more_than_2_31_outputs(name, dtype):
    v = check_case(OP, name, IMPLEMENTATIONS[name], big_case(), dtype, "cuda", seed=7)
    torch.cuda.empty_cache()
    assert v.ok, v.why


FORCED = {
    "v3 split 8": (v3_splitk.matmul_tiles, v3_splitk.Config(16, 64, 64, 8, 4, 3)),
    "v3 split 3 wide": (v3_splitk.matmul_tiles, v3_splitk.Config(64, 128, 128, 3, 4, 3)),
    "v3 vector": (v3_splitk.matmul_tiles, v3_splitk.Config(1, 64, 32, 4, 4, 1)),  # one row of A
    "v1 small groups": (v1_grouped.matmul_tiles, v1_grouped.Config(64, 64, 32, 4, 4, 3)),
    "v2 small tiles": (v2_persistent.matmul_tiles, v1_grouped.Config(64, 64, 64, 4, 4, 3)),
}
EDGES = [plain(1, 4096, 4096), plain(1, 5000, 4097),
         plain(16, 1000, 3000), plain(64, 1000, 777), plain(3, 5000, 4097),
         plain(300, 520, 1000), sliced(40, 96, 520), plain(1, 1, 1)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("path", FORCED)
def test_forced_configurations(path, dtype):
    tiles, config = FORCED[path]
    fn = entry(path, lambda a, b, c: tiles(a, b, c, config))
    check_all(path, fn, dtype, EDGES, seed=300)


def test_decode_shapes_split_k_by_default():
    a = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    said = which(a, b, "triton")
    assert said.startswith("triton-v3 partial_kernel[") and "sum_kernel" in said, said


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9,
                    reason="TMA needs Hopper")
def test_hopper_runs_the_tma_kernel():
    a = torch.randn(512, 384, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(384, 640, device="cuda", dtype=torch.bfloat16)
    said = which(a, b, "triton-v2")
    assert said.startswith("triton-v2 persistent_kernel[") and "runs v1" not in said, said
    assert which(a, b, "triton") == said  # 16-bit, M > 64, rows in 16-byte multiples
    c = IMPLEMENTATIONS["triton-v2"](a, b)
    assert OP.compare(c, OP.reference(a, b), torch.bfloat16).why == ""
    b = torch.randn(384, 641, device="cuda", dtype=torch.bfloat16)
    assert "not a multiple of 16 bytes; runs v1" in which(a, b, "triton-v2")
