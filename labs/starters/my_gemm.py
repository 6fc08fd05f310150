"""My Triton GEMM, C = A @ B: a starter file for the Phase 24 lab.

Grade it with

    python -m phase24 check gemm --file labs/starters/my_gemm.py

(on a machine without a GPU the checker runs it in Triton's interpreter, in float32 and float16:
the interpreter has no bfloat16 ``tl.dot``). The checker runs this file's code, with your
rights, in a worker process of its own.

Once yours passes, or if you are stuck, compare with labs/solutions/my_gemm.py.

The ABI the checker expects from this file:

* ``matmul_tiles(a, b, c)``: a Python function that launches your kernel(s): a ``@triton.jit``
  kernel of this file must compute the result (one that calls torch.matmul fails).
  ``a`` is (M, K) and ``b`` is (K, N), float32, float16 or bfloat16, both row-major and
  contiguous (row r of a starts at ``r * K``), M, N, K >= 1 and multiples of nothing.
  ``c`` is a fresh contiguous (M, N) tensor of the same dtype: fill every element with the
  product, summed in float32 and rounded once to c's dtype; return nothing.
* The checker handles the rest: transposed or sliced operands, empty sizes, argument errors.

What the checker compares against: the product in float64, with a bound that grows with K. In
float32 the products must be IEEE (``tl.dot(..., input_precision="ieee")``): TF32 keeps 10
mantissa bits and fails the bound on a GPU.
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

    # TODO: for each step k0 = 0, BLOCK_K, 2 * BLOCK_K, ... below K:
    #   1. load the BLOCK_M x BLOCK_K slab of a at rows `rows`, columns k0 + tl.arange(0, BLOCK_K)
    #      (offsets rows.to(tl.int64)[:, None] * K + k[None, :]), masked to rows < M and k < K
    #      with other=0.0: the elements past an edge then add nothing;
    #   2. load the BLOCK_K x BLOCK_N slab of b the same way (k[:, None] * N + cols[None, :]);
    #   3. acc = tl.dot(a, b, acc, input_precision="ieee").
    # Until you do, acc stays 0 and the checker fails.

    tl.store(c_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
             acc.to(c_ptr.dtype.element_ty), mask=(rows < M)[:, None] & (cols < N)[None, :])


def matmul_tiles(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    block_m, block_n, block_k = 64, 64, 32
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    my_gemm_kernel[grid](a, b, c, m, n, k, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
