"""The record of v3_registers_1d.cu (cuda-v3: TM outputs of a column of C a thread); its parameters
and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v3", "cuda-v3", "v3_registers_1d.cu", lambda p: p["BM"] * p["BN"] // p["TM"])
