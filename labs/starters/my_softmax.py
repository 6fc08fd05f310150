"""My Triton softmax: a starter file for the Phase 24 lab.

Grade it with

    python -m phase24 check softmax --file labs/starters/my_softmax.py

(on a machine without a GPU the checker runs it in Triton's interpreter; nothing to set). The
checker runs this file's code, with your rights, in a worker process of its own.

Once yours passes, or if you are stuck, compare with labs/solutions/my_softmax.py.

The ABI the checker expects from this file:

* ``softmax_rows(x2d, out)``: a Python function that launches your kernel(s): a
  ``@triton.jit`` kernel of this file must compute the result (one that calls torch.softmax fails).
  ``x2d`` is an (M, N) tensor, float32, float16 or bfloat16, M >= 1 and N >= 1. Its last dim has
  stride 1, but its rows may be further apart than N: the row stride is ``x2d.stride(0)``
  (a sliced view ``x[:, 1:]`` gives rows that are not even 16-byte aligned).
  ``out`` is a fresh contiguous (M, N) tensor of the same dtype: row r starts at ``r * N``.
  Fill every element of ``out`` with the softmax of the row, computed in float32; return nothing.
* The checker handles the rest: other leading shapes, empty tensors, argument errors.

What the checker compares against: softmax in float64. A row of -inf must give NaN, and a NaN
anywhere in a row makes the whole row NaN, exactly like ``torch.softmax``.
"""

import triton
import triton.language as tl


@triton.jit
def my_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK_N: tl.constexpr):
    # One program per row; the row fits in one block of BLOCK_N >= n_cols values.
    row = tl.program_id(0).to(tl.int64)  # int64: row * stride can pass 2^31
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask,
                other=float("-inf")).to(tl.float32)

    # TODO: compute the softmax of x in float32.
    #   1. subtract the row maximum (tl.max), so exp never overflows;
    #   2. exponentiate (tl.exp, or tl.exp2 of the value times log2(e));
    #   3. divide by the row sum (tl.sum).
    # Masked lanes hold -inf, so they add exp(-inf) = 0 to the sum.
    # Until you do, the row is copied unchanged and the checker fails.
    y = x

    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x2d, out):
    n_rows, n_cols = x2d.shape
    block_n = triton.next_power_of_2(n_cols)
    num_warps = 4 if block_n <= 2048 else 8 if block_n <= 8192 else 16
    my_softmax_kernel[(n_rows,)](x2d, out, n_cols, x2d.stride(0), BLOCK_N=block_n,
                                 num_warps=num_warps)
