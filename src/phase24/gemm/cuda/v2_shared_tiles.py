"""The record of v2_shared_tiles.cu (cuda-v2: tiles of A and B in shared memory); its parameters
and configurations are the .cu's own (rung.py reads them)."""

from phase24.gemm.cuda.rung import Rung

RUNG = Rung("v2", "cuda-v2", "v2_shared_tiles.cu", lambda p: p["TILE"] ** 2)
