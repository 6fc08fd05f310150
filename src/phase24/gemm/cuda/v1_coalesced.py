"""The record of v1_coalesced.cu (cuda-v1: v0 with a warp's lanes along a row of C); its parameters
and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v1", "cuda-v1", "v1_coalesced.cu", lambda p: 256,
            fixed_tile=(8, 32))
