"""The record of v8_mma.cu (cuda-v8: the Tensor Cores through mma.sync, tiles copied by cp.async);
its parameters and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, warps

RUNG = Rung("v8", "cuda-v8", "v8_mma.cu", warps,
            sixteen_bit=True, aligned_rows=True)
