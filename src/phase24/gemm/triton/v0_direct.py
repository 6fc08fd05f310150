"""triton-naive: the direct translation, one BLOCK_M x BLOCK_N tile of C per program.

The definition C[m, n] = sum over k of A[m, k] B[k, n], written for tiles: a program loads a
BLOCK_M x BLOCK_K slab of A and a BLOCK_K x BLOCK_N slab of B per step of K, multiplies them with
``tl.dot`` into a float32 accumulator, and stores the tile once, rounded to C's dtype. Every load
and the store are masked on every edge (rows past M, columns past N, the K tail), so any sizes
work; elements past an edge read 0, which adds nothing. float32 products are IEEE
(``input_precision="ieee"``: TF32 keeps 10 mantissa bits and fails the Op's bound); 16-bit inputs
go to the tensor cores with float32 sums.
One tile shape for every size and dtype, programs in row-major order over C's tiles, and one
stage (``num_stages=1``: each step waits for its loads before its product, no software
pipelining), so that what triton-v1 adds shows.
Prediction: 16-bit inputs reach a fair fraction of cuBLAS on large squares (the tiles reuse A and
B from shared memory), well below it (its loads are not overlapped with its products, and
neighbouring programs share little in L2); decode shapes (M <= 64) leave most of the tile's rows
empty and use few programs.
Limit: none on sizes (offsets in 64 bits); speed.
"""

import triton
import triton.language as tl

from phase24.gemm.triton import common
from phase24.gemm.triton.common import Launch, Plan, cdiv

BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS = 64, 64, 32, 4


# --8<-- [start:kernel]
@triton.jit
def direct_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # int64 row offsets: M * K and M * N may pass 2^31
    a_rows = a_ptr + rows.to(tl.int64)[:, None] * K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        a = tl.load(a_rows + k[None, :], mask=(rows < M)[:, None] & (k < K)[None, :], other=0.0)
        b = tl.load(b_ptr + k.to(tl.int64)[:, None] * N + cols[None, :],
                    mask=(k < K)[:, None] & (cols < N)[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
             acc.to(c_ptr.dtype.element_ty), mask=(rows < M)[:, None] & (cols < N)[None, :])
# --8<-- [end:kernel]


def decide(a, b, c, config=None) -> Plan:
    m, k = a.shape
    n = b.shape[1]
    grid = (cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N),)
    return Plan((Launch("triton-naive", direct_kernel, grid, (m, n, k),
                        dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                             num_warps=NUM_WARPS, num_stages=1)),), launch)


def launch(p: Plan, a, b, c) -> None:
    (k,) = p.launches
    direct_kernel[k.grid](a, b, c, *k.args, **k.meta)


def matmul_tiles(a, b, c, config=None) -> None:
    """The tile-kernel contract (gemm/args.py): C = A @ B into c."""
    common.run(decide, a, b, c, config)
