"""The record of v10_tma_producer.cu (cuda-v10: TMA copies filled by a producer warpgroup); its
parameters and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung, with_producer

RUNG = Rung("v10", "cuda-v10", "v10_tma_producer.cu", with_producer,
            sixteen_bit=True, hopper=True, aligned_rows=True, tma=True)
