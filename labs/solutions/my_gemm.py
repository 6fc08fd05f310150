"""Solution of labs/starters/my_gemm.py (lab 03, GEMM): one program per BLOCK_M x BLOCK_N tile of
C, K in slabs of BLOCK_K, each slab's product a ``tl.dot`` with IEEE float32 products.

    python -m phase24 check gemm --file labs/solutions/my_gemm.py
"""

import triton
import triton.language as tl


@triton.jit
def my_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per BLOCK_M x BLOCK_N tile of C, tiles in row-major order.
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

    # Slabs of BLOCK_K along K; elements past an edge load as 0 and add nothing.
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows.to(tl.int64)[:, None] * K + k[None, :],
                    mask=(rows < M)[:, None] & (k < K)[None, :], other=0.0)
        b = tl.load(b_ptr + k.to(tl.int64)[:, None] * N + cols[None, :],
                    mask=(k < K)[:, None] & (cols < N)[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")

    tl.store(c_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
             acc.to(c_ptr.dtype.element_ty), mask=(rows < M)[:, None] & (cols < N)[None, :])


def matmul_tiles(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    my_gemm_kernel[grid](a, b, c, m, n, k, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
