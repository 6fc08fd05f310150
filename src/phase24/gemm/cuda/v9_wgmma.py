"""The record of v9_wgmma.cu (cuda-v9: Hopper's wgmma); its parameters and configurations are the
.cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, warpgroups

RUNG = Rung("v9", "cuda-v9", "v9_wgmma.cu", warpgroups,
            sixteen_bit=True, hopper=True, aligned_rows=True)
