"""The record of v7_prefetch.cu (cuda-v7: warp tiles whose next loads overlap the products, grouped
order); its parameters and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, warps

RUNG = Rung("v7", "cuda-v7", "v7_prefetch.cu", warps)
