"""triton-v3: split-K for decode shapes (M from 1 to 64 against large N and K).

What changed from triton-v1: at M <= 64 all of C is one row of tiles, so v1 starts N / BLOCK_N
programs (64 at 1 x 4096 x 4096 with tiles 64 wide), fewer than the H200's 132 SMs, and each
walks all of K alone: the GPU idles while the weights, the whole cost of the product, stream in.
Here K is cut into SPLIT chunks of whole BLOCK_K steps and each (tile, chunk) is a program of
its own, so there are enough programs to keep every SM reading. A program writes its float32
partial sum of the tile into a scratch (SPLIT, M, N); a second launch adds the SPLIT partials of
each element in chunk order, in float32, and rounds once to C's dtype: the result is the same at
every run (no atomics, whose order would vary). With SPLIT = 1 the first launch writes C itself
and there is no second launch.
One row (M = 1) with BLOCK_M = 1, a configuration the tuner tries: tl.dot's smallest tile is 16
rows, so a tile of one row makes 16 times the products it keeps; the vector kernel instead
multiplies the row's BLOCK_K values into a BLOCK_K x BLOCK_N tile of B and adds the products in
float32 registers, summed over K once at the end: one multiply-add per element of B read.
Tile: BLOCK_M the smallest the tensor cores take (16) that holds M; SPLIT so that there are
about two programs per SM, with at least MIN_STEPS steps of K per chunk.
Prediction: decode shapes move from a fraction of the SMs to all of them, towards the memory
roofline (reading B once); the scratch adds 2 x SPLIT x M x N x 4 bytes, small beside B when M
is small; large M gains nothing (SPLIT = 1, v1's kernel without its grouped order). In float32 at
M = 1 the vector kernel takes B's read alone: the dot's 16-row tile costs as much as M = 16.
Limit: none on sizes; the scratch's offsets are 64-bit.
"""

import dataclasses

import torch
import triton
import triton.language as tl

from phase24.gemm.triton import common
from phase24.gemm.triton.common import Launch, Plan, cdiv, next_pow2
from phase24.gemm.triton.v1_grouped import dot_steps, stage_bytes

MIN_STEPS = 4    # steps of K a chunk keeps, at least (fewer leave the pipeline nothing to overlap)
SUM_BLOCK = 1024  # elements of C per program of the second launch


@dataclasses.dataclass(frozen=True)
class Config:
    block_m: int    # 1: the vector kernel (one row of A; more rows take 16)
    block_n: int
    block_k: int
    split: int      # chunks of K asked for (the plan may use fewer: chunks are whole steps)
    num_warps: int
    num_stages: int


def heuristic(m: int, n: int, k: int, elem: int, smem: int, sms: int) -> Config:
    bm = min(64, max(16, next_pow2(m))) if m <= 64 else 128
    bn = min(64 if m <= 64 else 128, max(16, next_pow2(n)))
    bk = min(128 if elem == 2 else 64, max(16, next_pow2(k)))
    tiles = cdiv(m, bm) * cdiv(n, bn)
    split = max(1, min(cdiv(2 * sms, tiles), cdiv(k, bk) // MIN_STEPS))
    stages = max(1, min(4, smem // stage_bytes(bm, bn, bk, elem)))
    if k % 16 or n % 16:  # loads held in registers, not copied asynchronously (see v1)
        stages = min(stages, 2)
    return Config(bm, bn, bk, split, 4, stages)


def candidates(m: int, n: int, k: int, elem: int, smem: int, sms: int) -> list[Config]:
    """What an offline tuner times: the heuristic's configuration, then tiles 32 to 128 wide
    and 64 to 256 deep with 1 to 16 chunks."""
    base = heuristic(m, n, k, elem, smem, sms)
    out = [base]
    for bn in (32, 64, 128):
        for bk in (64, 128, 256):
            for split in (1, 2, 4, 8, 16):
                stages = min(4, smem // stage_bytes(base.block_m, bn, bk, elem))
                if stages >= 2 and cdiv(k, bk) >= split:
                    out.append(Config(base.block_m, bn, bk, split, 4, stages))
    if m == 1:  # the vector kernel: B's tile in registers, BLOCK_K x BLOCK_N / 128 floats a
        # thread, no shared memory; Triton pipelines only loads that feed a tl.dot, so one stage,
        # and the many programs an SM holds keep the loads in flight
        for bn, bk in ((64, 32), (128, 32), (64, 64), (256, 16)):
            for split in (2, 4, 8, 16):
                if cdiv(k, bk) >= split:
                    out.append(Config(1, bn, bk, split, 4, 1))
    return list(dict.fromkeys(out))


# --8<-- [start:kernel]
@triton.jit
def partial_kernel(a_ptr, b_ptr, out_ptr, M, N, K, chunk, b_step,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    part = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_first = part * chunk
    length = tl.minimum(chunk, K - k_first)  # this chunk's steps of K (the last may be short)
    kr = tl.arange(0, BLOCK_K)
    ks = k_first + kr
    # rows past M read row (r mod M), sums the store drops; int64: M * K and K * N > 2^31
    a_ptrs = a_ptr + (rows % M).to(tl.int64)[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks.to(tl.int64)[:, None] * N + cols[None, :]
    in_n = (cols < N)[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc = dot_steps(a_ptrs, b_ptrs, kr, length, in_n, b_step, acc, BLOCK_K, EVEN_K)  # v1's steps
    # partial `part` of C (the scratch), or C itself when there is one chunk
    out = out_ptr + part.to(tl.int64) * M * N + rows.to(tl.int64)[:, None] * N + cols[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=(rows < M)[:, None] & in_n)


@triton.jit
def vector_kernel(a_ptr, b_ptr, out_ptr, N, K, chunk,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    part = tl.program_id(1)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    in_n = cols < N
    kr = tl.arange(0, BLOCK_K)
    k_first = part * chunk
    acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)  # a product per element of B's tile
    for k0 in range(k_first, tl.minimum(k_first + chunk, K), BLOCK_K):
        ks = k0 + kr
        in_k = ks < K
        x = tl.load(a_ptr + ks, mask=in_k, other=0.0).to(tl.float32)
        w = tl.load(b_ptr + ks.to(tl.int64)[:, None] * N + cols[None, :],
                    mask=in_k[:, None] & in_n[None, :], other=0.0).to(tl.float32)
        acc += x[:, None] * w
    out = out_ptr + part.to(tl.int64) * N + cols  # partial `part` of the row, or C's row itself
    tl.store(out, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=in_n)


@triton.jit
def sum_kernel(ws_ptr, c_ptr, MN, SPLIT, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    p = ws_ptr + offs
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(0, SPLIT):  # chunk order, every run
        acc += tl.load(p, mask=mask, other=0.0)
        p += MN
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)
# --8<-- [end:kernel]


def default_config(a: torch.Tensor, b: torch.Tensor) -> Config:
    """The tuned table's configuration for triton-v3 at this shape, else the heuristic's."""
    hit = common.tuned_pick(a, b)
    if hit is not None and hit[0] == "triton-v3":
        return Config(**hit[1])
    (m, k), n = a.shape, b.shape[1]
    return heuristic(m, n, k, a.element_size(), common.smem_per_program(a.device),
                     common.num_sms(a.device))


def decide(a, b, c, config: Config | None = None) -> Plan:
    (m, k), n = a.shape, b.shape[1]
    cfg = config or default_config(a, b)
    if cfg.block_m == 1 and m > 1:  # the vector kernel takes one row; more take the smallest tile
        cfg = dataclasses.replace(cfg, block_m=16)
    chunk = cdiv(cdiv(k, cfg.split), cfg.block_k) * cfg.block_k  # whole steps
    split = cdiv(k, chunk)
    tiles = cdiv(m, cfg.block_m) * cdiv(n, cfg.block_n)
    if cfg.block_m == 1:
        first = Launch("triton-v3", vector_kernel, (tiles, split), (n, k, chunk),
                       dict(BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k,
                            num_warps=cfg.num_warps, num_stages=cfg.num_stages))
    else:
        meta = dict(BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k,
                    EVEN_K=k % chunk == 0, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        first = Launch("triton-v3", partial_kernel, (tiles, split),
                       (m, n, k, chunk, cfg.block_k * n), meta)
    if split == 1:
        return Plan((first,), launch)
    second = Launch("triton-v3", sum_kernel, (cdiv(m * n, SUM_BLOCK),), (m * n, split),
                    dict(BLOCK=SUM_BLOCK, num_warps=4))
    return Plan((first, second), launch)


def launch(p: Plan, a, b, c) -> None:
    first = p.launches[0]  # partial_kernel, or vector_kernel for one row
    if len(p.launches) == 1:
        first.kernel[first.grid](a, b, c, *first.args, **first.meta)
        return
    second = p.launches[1]
    m, n = c.shape
    ws = torch.empty((second.args[1], m, n), dtype=torch.float32, device=c.device)
    first.kernel[first.grid](a, b, ws, *first.args, **first.meta)
    sum_kernel[second.grid](ws, c, *second.args, **second.meta)


def matmul_tiles(a, b, c, config: Config | None = None) -> None:
    """The tile-kernel contract (gemm/args.py): C = A @ B into c."""
    common.run(decide, a, b, c, config)
