"""A cheat: its kernel takes K of up to 32 in one step (right there), and beyond it hands the
product to torch. The grader must fail the larger cases, naming the torch operation."""
import triton
import triton.language as tl


@triton.jit
def one_step(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    k = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rows[:, None] * K + k[None, :],
                mask=(rows < M)[:, None] & (k < K)[None, :], other=0.0)
    b = tl.load(b_ptr + k[:, None] * N + cols[None, :],
                mask=(k < K)[:, None] & (cols < N)[None, :], other=0.0)
    acc = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows < M)[:, None] & (cols < N)[None, :])


def matmul_tiles(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    if k > 32:
        c.copy_(a @ b)  # a fallback the checker must see
        return
    one_step[(triton.cdiv(m, 16) * triton.cdiv(n, 16),)](a, b, c, m, n, k, BLOCK_M=16,
                                                         BLOCK_N=16, BLOCK_K=32)
