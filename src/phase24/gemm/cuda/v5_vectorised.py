"""The record of v5_vectorised.cu (cuda-v5: v4's accesses 16 bytes at a time); its parameters and
configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v5", "cuda-v5", "v5_vectorised.cu",
            lambda p: p["BM"] * p["BN"] // (p["TM"] * p["TN"]))
