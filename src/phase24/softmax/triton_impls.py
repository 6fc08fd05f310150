"""Triton softmax implementations (filled in below)."""

IMPLEMENTATIONS: dict = {}
