"""The record of v11_persistent.cu (cuda-v11: persistent blocks, one per SM, walking the tiles);
its parameters and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, with_producer

RUNG = Rung("v11", "cuda-v11", "v11_persistent.cu", with_producer,
            sixteen_bit=True, hopper=True, aligned_rows=True, tma=True,
            persistent=True)
