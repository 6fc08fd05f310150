"""The record of v6_warp_tiles.cu (cuda-v6: a tile of C per warp); its parameters and
configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, warps

RUNG = Rung("v6", "cuda-v6", "v6_warp_tiles.cu", warps)
