"""CUDA C softmax implementations (filled in below)."""

IMPLEMENTATIONS: dict = {}
