"""Inputs past 2^31 on a GPU, through every registered Triton rung: 2^31 + 2048 rows of one value
(bfloat16: 4 GB in, 4 GB out), the same values as rows of 64 and of 2048 (M·N past 2^31 in a
single launch), and triton-v3 with M·S just under, at and over 2^31 chunks. Each gives 1/N
everywhere (exact in bfloat16 for these N), writes every value of its poisoned output and leaves
the input as it was. One input and one output, made once, serve every case. tests/test_big_rows.py
runs the same paths on small inputs on a CPU."""

from __future__ import annotations

import pytest
import torch

from phase24.softmax import IMPLEMENTATIONS
from phase24.softmax.triton import RUNGS, common, parts

pytestmark = pytest.mark.gpu
VALUES = 2**31 + 2048
VALUE = -1.5  # every input value: each row's softmax is 1/N exactly
NEED = 2 * VALUES * 2 + 2**30  # in, out, and a GiB for scratch (at most 128 MB a launch) and Triton


@pytest.fixture(scope="module")
def big():
    free, _ = torch.cuda.mem_get_info()
    if free < NEED:
        pytest.skip(f"needs {NEED / 2**30:.1f} GiB of free GPU memory; {free / 2**30:.1f} GiB "
                    "free here")
    x = torch.full((VALUES,), VALUE, dtype=torch.bfloat16, device="cuda")
    out = torch.empty_like(x)
    yield x, out
    del x, out
    common.forget()
    common._WORDS.clear()  # the exchange words these shapes made (freed in stream order)
    torch.cuda.empty_cache()


def check(name: str, x: torch.Tensor, out: torch.Tensor, rows: int, n: int) -> common.Plan:
    """``name`` on the first rows x n values of x: 1/n everywhere, x unchanged; its plan."""
    x2d, out2d = x[:rows * n].view(rows, n), out[:rows * n].view(rows, n)
    out2d.fill_(float("nan"))
    what = f"{name} on {rows} rows of {n}"
    plan = common.decided(RUNGS[name].decide, x2d, out2d).plan
    for _, _, d in plan.parts or ((0, rows, common.Decided(plan)),):
        assert all(0 < launch.grid < 2**31 for launch in d.plan.launches), what
    y = IMPLEMENTATIONS[name](x2d, out2d)
    torch.cuda.synchronize()
    assert y is out2d, what
    lo, hi = torch.aminmax(out2d)  # (NaN if any value was left unwritten)
    assert lo.item() == hi.item() == 1 / n, f"{what}: {lo.item()} .. {hi.item()}, not {1 / n}"
    lo, hi = torch.aminmax(x2d)
    assert lo.item() == hi.item() == VALUE, \
        f"{what}: the input changed ({lo.item()} .. {hi.item()})"
    return plan


@pytest.mark.parametrize("n", [1, 64, 2048])
@pytest.mark.parametrize("name", list(RUNGS))
def test_gpu_past_2_31(big, name, n):
    # n = 1: 2^31 + 2048 rows (no grid holds them); 64 and 2048: 2^25 + 32 and 2^20 + 1 rows,
    # whose last values are past 2^31 from the first, in one launch of naive and v1.
    x, out = big
    check(name, x, out, VALUES // n, n)


@pytest.mark.parametrize("rows", [2**31 - 2048, 2**31 - 1, 2**31, 2**31 + 2048])
def test_gpu_lagged_chunks_around_2_31(big, rows):
    # triton-v3 on rows of one value: one chunk a row, M·S = rows chunks in all, in parts of
    # parts.MAX_WORDS chunks (a word each), each run by v3's own kernel.
    x, out = big
    plan = check("triton-v3", x, out, rows, 1)
    assert len(plan.parts) == -(-rows // parts.MAX_WORDS), plan.describe()[:300]
    assert {d.plan.launches[0].rung for _, _, d in plan.parts} == {"triton-v3"}, \
        plan.describe()[:300]
