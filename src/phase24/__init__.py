"""Phase 24 kernel lab: fused softmax in CUDA C and Triton, measured against torch."""

__version__ = "0.1.0"
