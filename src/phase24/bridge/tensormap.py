"""TMA tensor maps (Hopper): the 128-byte description of a matrix in global memory that a kernel's
``cp.async.bulk.tensor`` copies read (where it lies, its shape and row stride, the box one copy
moves and the swizzle it writes into shared memory), made by the driver's
``cuTensorMapEncodeTiled`` and passed to a kernel by value, as a ``const __grid_constant__
CUtensorMap`` parameter.

A map holds its tensor's address: each map is kept for its address and layout (``encoded``),
and a replayed launch (bridge/replay.py) remakes its maps from the new tensors' addresses.
"""

from __future__ import annotations

import ctypes
import functools

import torch

from phase24.bridge.driver_launch import LaunchError, _driver, error_name


class TensorMap(ctypes.Structure):
    """A CUtensorMap: 128 opaque bytes, copied into the kernel's parameters at launch."""

    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


# CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion values (cuda.h).
DATA_TYPE = {torch.float16: 6, torch.float32: 7, torch.bfloat16: 9}
SWIZZLE_128B = 3
L2_PROMOTION_128B = 2


def _encode():
    lib = _driver()
    fn = lib.cuTensorMapEncodeTiled
    if fn.argtypes is None:
        u32p, u64p = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p,
                       u64p, u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return fn


MAX_MAPS = 4096  # maps kept (a map depends only on what its key names)
_maps: dict[tuple, TensorMap] = {}


def encoded(address: int, rows: int, cols: int, row_bytes: int, dtype: torch.dtype,
            box_cols: int, box_rows: int) -> TensorMap:
    """The map of the rows x cols matrix at ``address`` (``row_bytes`` from a row to the next),
    boxes of box_rows x box_cols elements, 128-byte swizzle, zeros outside: encoded once per
    key and kept (a replayed launch asks again at each call, with the new tensors' addresses)."""
    key = (address, rows, cols, row_bytes, dtype, box_cols, box_rows)
    found = _maps.get(key)
    if found is not None:
        return found
    buffer = (ctypes.c_ubyte * (128 + 64))()  # the driver writes the map 64-byte aligned
    aligned = (ctypes.addressof(buffer) + 63) & ~63
    rc = _encode()(ctypes.c_void_p(aligned), DATA_TYPE[dtype], 2, ctypes.c_void_p(address),
                   (ctypes.c_uint64 * 2)(cols, rows), (ctypes.c_uint64 * 1)(row_bytes),
                   (ctypes.c_uint32 * 2)(box_cols, box_rows), (ctypes.c_uint32 * 2)(1, 1),
                   0, SWIZZLE_128B, L2_PROMOTION_128B, 0)
    if rc:
        raise LaunchError(f"cuTensorMapEncodeTiled refused a {rows} x {cols} {dtype} matrix "
                          f"with boxes of {box_rows} x {box_cols}: {error_name(rc)}")
    out = TensorMap()
    ctypes.memmove(ctypes.addressof(out), aligned, 128)
    # What a replay needs to make the same map for another tensor of the same layout.
    out.address = address
    out.remake = functools.partial(encoded, rows=rows, cols=cols, row_bytes=row_bytes,
                                   dtype=dtype, box_cols=box_cols, box_rows=box_rows)
    if len(_maps) >= MAX_MAPS:
        _maps.clear()
    _maps[key] = out
    return out


def tiled_128b(t: torch.Tensor, box_cols: int, box_rows: int) -> TensorMap:
    """The map of row-major matrix ``t`` (rows x cols, unit column stride, rows 16-byte aligned)
    whose copies move boxes of ``box_rows`` x ``box_cols`` elements (a row of a box: 128 bytes at
    most) into shared memory with the 128-byte swizzle; elements outside ``t`` arrive as zeros."""
    rows, cols = t.shape
    if t.stride(1) != 1 or (t.stride(0) * t.element_size()) % 16 or t.data_ptr() % 16:
        raise LaunchError("a TMA tensor map needs unit column stride and rows on 16-byte "
                          f"boundaries (got strides {t.stride()}, address {t.data_ptr():#x})")
    return encoded(t.data_ptr(), rows, cols, t.stride(0) * t.element_size(), t.dtype, box_cols,
                   box_rows)
