"""The operations the commands know, by name: each an operation package whose ``spec`` module
holds its ``Op`` (core/op.py). Imported only when a command asks for one."""

from __future__ import annotations

import importlib

from phase24.core.op import Op

OPERATIONS = {"softmax": "phase24.softmax.spec", "gemm": "phase24.gemm.spec"}


class UnknownOperation(ValueError):
    pass


def get(name: str) -> Op:
    if name not in OPERATIONS:
        raise UnknownOperation(f"unknown operation {name!r}: the lab has "
                               f"{', '.join(sorted(OPERATIONS))}")
    return importlib.import_module(OPERATIONS[name]).OP
