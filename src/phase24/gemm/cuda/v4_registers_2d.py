"""The record of v4_registers_2d.cu (cuda-v4: a TM x TN block of outputs a thread); its parameters
and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v4", "cuda-v4", "v4_registers_2d.cu",
            lambda p: p["BM"] * p["BN"] // (p["TM"] * p["TN"]))
