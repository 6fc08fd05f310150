"""A correct Triton GEMM (the positive control), written as Triton's tutorial writes it: a 2-D
grid of BM x BN tiles of C, pointers to A's and B's tiles moved along K each step, tl.dot with
IEEE float32 products, masks on every edge (the K tail included)."""
import triton
import triton.language as tl


@triton.jit
def tile_gemm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm.to(tl.int64)[:, None] * K + rk[None, :]
    b_tile = b_ptr + rk.to(tl.int64)[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        left = K - k0
        a = tl.load(a_tile, mask=(rm < M)[:, None] & (rk < left)[None, :], other=0.0)
        b = tl.load(b_tile, mask=(rk < left)[:, None] & (rn < N)[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_tile += BK
        b_tile += BK * N
    out = c_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :]
    tl.store(out, acc.to(c_ptr.dtype.element_ty), mask=(rm < M)[:, None] & (rn < N)[None, :])


def matmul_tiles(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    tile_gemm[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BM=32, BN=32, BK=16)
