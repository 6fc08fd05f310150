"""Can Triton split one row over a thread-block cluster? Compile a one-row softmax for Hopper
(sm_90) with num_ctas = 1, 2, 4 and report. No GPU needed: Triton compiles for a named target.

Usage: python3 scripts/triton_clusters.py
Triton 3.6 launches a program with num_ctas > 1 as a cluster of that many blocks, the tile split
across them; lab 03 cites what this prints for its row reductions.
"""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def one_row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


def main() -> None:
    print(f"triton {triton.__version__}, one row of 65536 float32 values, 32 warps, target sm_90")
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"}
    for ctas in (1, 2, 4):
        source = ASTSource(fn=one_row_softmax, signature=signature, constexprs={"BLOCK": 65536})
        try:
            triton.compile(source, target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": 32, "num_ctas": ctas})
            print(f"  num_ctas={ctas}: compiles")
        except Exception as err:  # the MLIR pipeline's failure; its first line names the pass
            print(f"  num_ctas={ctas}: does not compile ({type(err).__name__}: "
                  f"{str(err).splitlines()[0][:100]})")


if __name__ == "__main__":
    main()
