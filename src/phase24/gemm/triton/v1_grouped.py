"""triton-v1: the tuned kernel: programs in groups of rows for L2 reuse, a tile shape per shape,
and the loads of the next steps of K in flight while the tensor cores work (``num_stages``).

What changed from triton-naive:
* order: program p of the naive kernel takes tile (p // tiles_n, p % tiles_n), so the programs
  running at once cover one or two rows of tiles of C and read all of B each. Here GROUP_M rows
  of tiles are walked column by column: the programs in flight share a few slabs of A and a few
  of B, which stay in L2 between their reads;
* tile: BLOCK_M x BLOCK_N x BLOCK_K, warps and stages from the tuned table (triton_configs.json,
  measured offline on one GPU) or, for shapes and GPUs it lacks, ``heuristic``: the largest tile
  that still gives every SM a program, as many stages as shared memory holds (up to 4);
* software pipelining: with ``num_stages`` = s Triton keeps s - 1 steps of loads of A and B in
  flight (asynchronous copies into shared memory) while the current step's product runs;
* edges: rows past M wrap onto valid rows (their sums land in rows the store drops), so A's loads
  need no row mask; the K tail is masked only when K is not a multiple of BLOCK_K (``EVEN_K``).
Prediction: bfloat16 and float16 near cuBLAS on large shapes (most of the time in tensor-core
products, loads hidden behind them); float32 bound by the FMA pipe (IEEE products, no tensor
cores), below cuBLAS's float32; decode shapes still short of programs (M <= 64 is one row of
tiles: triton-v3 splits K for them).
Limit: none on sizes; pointers advance by a step computed in 64 bits.
"""

import dataclasses

import torch
import triton
import triton.language as tl

from phase24.gemm.triton import common
from phase24.gemm.triton.common import Launch, Plan, cdiv, next_pow2


@dataclasses.dataclass(frozen=True)
class Config:
    block_m: int
    block_n: int
    block_k: int
    group_m: int
    num_warps: int
    num_stages: int


def stage_bytes(block_m: int, block_n: int, block_k: int, elem: int) -> int:
    """Shared memory one stage of loads takes: a slab of A and one of B."""
    return (block_m * block_k + block_k * block_n) * elem


def heuristic(m: int, n: int, k: int, elem: int, smem: int, sms: int) -> Config:
    """The largest tile that gives every SM a program (from 128 x 256 for 16-bit inputs, 128 x
    128 for float32), clipped to the matrix; 8 warps for tiles of 128 x 64 and more; the stages
    that fit ``smem`` bytes, at most 4 (2 where K or N is not a multiple of 16)."""
    bm = 128 if m > 64 else max(16, next_pow2(m))
    bn = 256 if elem == 2 else 128
    bk = 64 if elem == 2 else 32
    bn = min(bn, max(16, next_pow2(n)))
    bk = min(bk, max(16, next_pow2(k)))
    while cdiv(m, bm) * cdiv(n, bn) < sms and (bn > 64 or bm > 64):
        if bn >= bm and bn > 64:
            bn //= 2
        else:
            bm //= 2
    stages = max(1, min(4, smem // stage_bytes(bm, bn, bk, elem)))
    if k % 16 or n % 16:
        # Triton cannot prove the rows 16-byte aligned, so its loads are not asynchronous
        # copies, and each stage in flight is held in registers (spills past 2 on sm_80)
        stages = min(stages, 2)
    warps = 8 if bm * bn >= 128 * 64 else 4
    return Config(bm, bn, bk, 8, warps, stages)


def candidates(m: int, n: int, k: int, elem: int, smem: int) -> list[Config]:
    """What an offline tuner times: the heuristic's tile and the usual tensor-core tiles, each
    with every stage count from 2 that fits ``smem``."""
    tiles = [(128, 256, 64, 8), (256, 128, 64, 8), (128, 128, 64, 8), (128, 128, 32, 4),
             (128, 64, 64, 4), (64, 128, 64, 4), (64, 64, 64, 4)] if elem == 2 else \
        [(128, 128, 32, 8), (128, 64, 32, 4), (64, 128, 32, 4), (64, 64, 32, 4), (128, 128, 16, 8)]
    out = []
    for bm, bn, bk, warps in tiles:
        for stages in (2, 3, 4, 5):
            if stages * stage_bytes(bm, bn, bk, elem) <= smem:
                out.append(Config(bm, bn, bk, 8, warps, stages))
    return list(dict.fromkeys([heuristic(m, n, k, elem, smem, 1 << 30)] + out))


@triton.jit
def grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 GROUP_M: tl.constexpr):
    """Tile number -> (row of tiles, column of tiles), GROUP_M rows of tiles at a time, walked
    column by column (the last group may have fewer rows)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    first_m = (tile // in_group) * GROUP_M
    rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % in_group) % rows_here
    pid_n = (tile % in_group) // rows_here
    return pid_m, pid_n


@triton.jit
def dot_steps(a_ptrs, b_ptrs, ks, length, in_n, b_step, acc, BLOCK_K: tl.constexpr,
              EVEN_K: tl.constexpr):
    """``acc`` plus the products of ``length`` values of K, BLOCK_K at a time: a_ptrs and b_ptrs
    point at the first step's tiles (``ks``: 0 .. BLOCK_K - 1), b_step is BLOCK_K * N (from the
    host: exact where it passes 2^31); without EVEN_K the last step masks what lies past it.
    v3 (split-K) runs the same steps over one chunk of K."""
    for i in range(0, tl.cdiv(length, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs, mask=in_n, other=0.0)
        else:
            left = length - i * BLOCK_K
            a = tl.load(a_ptrs, mask=ks[None, :] < left, other=0.0)
            b = tl.load(b_ptrs, mask=(ks[:, None] < left) & in_n, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K
        b_ptrs += b_step
    return acc


# --8<-- [start:kernel]
@triton.jit
def grouped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, b_step,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # rows past M read row (r mod M): valid memory, sums the store drops; int64: M * K > 2^31
    a_ptrs = a_ptr + (rows % M).to(tl.int64)[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks.to(tl.int64)[:, None] * N + cols[None, :]
    in_n = (cols < N)[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc = dot_steps(a_ptrs, b_ptrs, ks, K, in_n, b_step, acc, BLOCK_K, EVEN_K)
    tl.store(c_ptr + rows.to(tl.int64)[:, None] * N + cols[None, :],
             acc.to(c_ptr.dtype.element_ty), mask=(rows < M)[:, None] & in_n)
# --8<-- [end:kernel]


def default_config(a: torch.Tensor, b: torch.Tensor) -> Config:
    """The tuned table's configuration for triton-v1 at this shape, else the heuristic's."""
    hit = common.tuned_pick(a, b)
    if hit is not None and hit[0] == "triton-v1":
        return Config(**hit[1])
    (m, k), n = a.shape, b.shape[1]
    return heuristic(m, n, k, a.element_size(), common.smem_per_program(a.device),
                     common.num_sms(a.device))


def decide(a, b, c, config: Config | None = None) -> Plan:
    (m, k), n = a.shape, b.shape[1]
    cfg = config or default_config(a, b)
    grid = (cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n),)
    meta = dict(BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k,
                GROUP_M=cfg.group_m, EVEN_K=k % cfg.block_k == 0, num_warps=cfg.num_warps,
                num_stages=cfg.num_stages)
    return Plan((Launch("triton-v1", grouped_kernel, grid, (m, n, k, cfg.block_k * n), meta),),
                launch)


def launch(p: Plan, a, b, c) -> None:
    (k,) = p.launches
    grouped_kernel[k.grid](a, b, c, *k.args, **k.meta)


def matmul_tiles(a, b, c, config: Config | None = None) -> None:
    """The tile-kernel contract (gemm/args.py): C = A @ B into c."""
    common.run(decide, a, b, c, config)
