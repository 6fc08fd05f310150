"""A correct Triton GEMM (the positive control): labs/starters/my_gemm.py solved, a tile of C per
program with tl.dot over steps of K, masked on every edge, IEEE float32 products."""
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
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
    grid = (triton.cdiv(m, 64) * triton.cdiv(n, 64),)
    gemm_kernel[grid](a, b, c, m, n, k, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
