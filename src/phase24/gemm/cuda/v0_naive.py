"""The record of v0_naive.cu (cuda-naive: the naive rung: one thread per element of C); its
parameters and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v0", "cuda-naive", "v0_naive.cu", lambda p: 256,
            fixed_tile=(32, 8))
