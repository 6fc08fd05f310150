"""Can Triton split one row over a thread-block cluster? Compile a one-row softmax for Hopper
(sm_90) with num_ctas = 1, 2, 4 and report; then the same in Gluon (triton.experimental.gluon,
Triton's lower-level language), where the layout says explicitly how the row is cut across the
cluster's blocks. No GPU needed: Triton compiles for a named target.

Usage: python3 scripts/triton_clusters.py
Triton 3.6 launches a program with num_ctas > 1 as a cluster of that many blocks, the tile split
across them; lab 03 cites what this prints for its row reductions.
"""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource


@triton.jit
def one_row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


@gluon.jit
def one_row_softmax_gluon(x_ptr, y_ptr, BLOCK: gl.constexpr, layout: gl.constexpr):
    cols = gl.arange(0, BLOCK, layout=layout)
    x = gl.load(x_ptr + cols)
    e = gl.exp(x - gl.max(x, axis=0))
    gl.store(y_ptr + cols, e / gl.sum(e, axis=0))


def report(ctas: int, compile_it) -> None:
    try:
        compile_it()
        print(f"  num_ctas={ctas}: compiles")
    except Exception as err:  # the MLIR pipeline's failure; its first line names the pass
        print(f"  num_ctas={ctas}: does not compile ({type(err).__name__}: "
              f"{str(err).splitlines()[0][:100]})")


def main() -> None:
    print(f"triton {triton.__version__}, one row of 65536 float32 values, 32 warps, target sm_90")
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"}
    target = GPUTarget("cuda", 90, 32)
    for ctas in (1, 2, 4):
        source = ASTSource(fn=one_row_softmax, signature=signature, constexprs={"BLOCK": 65536})
        report(ctas, lambda: triton.compile(source, target=target,
                                            options={"num_warps": 32, "num_ctas": ctas}))
    # Gluon: 4096 values a block (8 warps, 4 a thread), the row cut into num_ctas such pieces by
    # the layout's cga_layout bases. (An assertion message from the compiler, "isReduceWithinCTA",
    # may be printed above the Gluon lines: a reduction across the blocks is not lowered.)
    print("gluon, one row of 4096 x num_ctas float32 values, 8 warps a block, target sm_90")
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr", "layout": "constexpr"}
    for ctas, bases in ((1, []), (2, [[1]]), (4, [[1], [2]])):
        layout = gl.BlockedLayout([4], [32], [8], [0], cga_layout=bases)
        source = GluonASTSource(fn=one_row_softmax_gluon, signature=signature,
                                constexprs={"BLOCK": 4096 * ctas, "layout": layout})
        report(ctas, lambda: triton.compile(source, target=target,
                                            options={"num_warps": 8, "num_ctas": ctas}))


if __name__ == "__main__":
    main()
