"""triton-v2: on Hopper, persistent programs that load their tiles with the TMA engine.

What changed from triton-v1:
* persistent: one program per SM (or fewer, when there are fewer tiles), each walking the tiles
  p, p + P, p + 2P, ... in v1's grouped order, so no program is ever started twice and the
  next tile's first loads overlap the previous tile's last steps (``flatten=True`` makes the
  tile loop and the K loop one pipelined loop);
* tensor descriptors: the host describes A, B and C once per call (base, sizes, strides, the
  block each load or store moves; ``TensorDescriptor``, outside every loop), and a load or store
  of a block is one TMA instruction: the copy engine computes the addresses, zero-fills what
  lies past an edge and drops stores past an edge, with no per-element address arithmetic or
  masks in the kernel's threads.
Prediction: 16-bit inputs at large K approach cuBLAS (the threads only issue products);
float32, where the products are FMA instructions, changes little from v1.
Limit: TMA needs a Hopper GPU or newer (compute capability 9+), 16-byte aligned bases and rows
whose byte length is a multiple of 16 (K and N times the element size). Elsewhere, and in
Triton's interpreter (which has no SMs to persist on), this rung runs triton-v1 and says so.
"""

import dataclasses

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from phase24.gemm.triton import common, v1_grouped
from phase24.gemm.triton.common import Launch, Plan, cdiv
from phase24.gemm.triton.v1_grouped import Config, grouped_tile

INTERPRETER = "Triton's interpreter has no SMs to persist on"


# --8<-- [start:kernel]
@triton.jit
def persistent_kernel(a_desc, b_desc, c_desc, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr):
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True):
        pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for s in range(steps):
            a = a_desc.load([off_m, s * BLOCK_K])  # past an edge: zeros
            b = b_desc.load([s * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc, input_precision="ieee")
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))  # past an edge: dropped
# --8<-- [end:kernel]


def why_not(a: torch.Tensor, b: torch.Tensor, c) -> str:
    """Why the TMA kernel cannot take these operands here ("" when it can)."""
    elem = a.element_size()
    (_, k), n = a.shape, b.shape[1]
    if (k * elem) % 16 or (n * elem) % 16:
        return f"rows of A ({k}) or B and C ({n}) are not a multiple of 16 bytes"
    if not (common.aligned(a) and common.aligned(b) and (c is None or c.data_ptr() % 16 == 0)):
        return "an operand is not 16-byte aligned"
    if common.INTERPRETED:
        return INTERPRETER
    if common.capability(a.device)[0] < 9:
        return "TMA needs compute capability 9.0 or newer"
    return ""


def fitted(cfg: Config, elem: int, smem: int) -> Config:
    """``cfg`` with no more stages than fit in ``smem`` beside the tile of C that the TMA store
    sends from shared memory (live through the whole flattened loop)."""
    room = smem - cfg.block_m * cfg.block_n * elem
    stage = v1_grouped.stage_bytes(cfg.block_m, cfg.block_n, cfg.block_k, elem)
    stages = max(1, min(cfg.num_stages, room // stage))
    return dataclasses.replace(cfg, num_stages=stages)


def default_config(a: torch.Tensor, b: torch.Tensor) -> Config:
    """The tuned table's configuration for triton-v2 at this shape, else v1's heuristic tile with
    the stages that fit beside C's tile."""
    hit = common.tuned_pick(a, b)
    if hit is not None and hit[0] == "triton-v2":
        return Config(**hit[1])
    (m, k), n = a.shape, b.shape[1]
    smem = common.smem_per_program(a.device)
    return fitted(v1_grouped.heuristic(m, n, k, a.element_size(), smem, common.num_sms(a.device)),
                  a.element_size(), smem)


def decide(a, b, c, config: Config | None = None, force: bool = False) -> Plan:
    """``force``: run the persistent kernel even in the interpreter (the CPU tests do, to check
    its tile walk; the alignment rules still hold)."""
    why = why_not(a, b, c)
    if why and not (force and why == INTERPRETER):
        return common.fallback(v1_grouped.decide(a, b, c, config), f"triton-v2: {why}; runs v1")
    (m, k), n = a.shape, b.shape[1]
    cfg = config or default_config(a, b)
    tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
    programs = min(tiles, common.num_sms(a.device))
    meta = dict(BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k,
                GROUP_M=cfg.group_m, PROGRAMS=programs, num_warps=cfg.num_warps,
                num_stages=cfg.num_stages)
    return Plan((Launch("triton-v2", persistent_kernel, (programs,), (m, n, k), meta),), launch)


def launch(p: Plan, a, b, c) -> None:
    (k,) = p.launches
    bm, bn, bk = k.meta["BLOCK_M"], k.meta["BLOCK_N"], k.meta["BLOCK_K"]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    persistent_kernel[k.grid](a_desc, b_desc, c_desc, *k.args, **k.meta)


def matmul_tiles(a, b, c, config: Config | None = None) -> None:
    """The tile-kernel contract (gemm/args.py): C = A @ B into c."""
    common.run(decide, a, b, c, config)
