"""triton-v4: triton-v3 with its chunks in a ring of shared-memory buffers (Gluon).

What changed from triton-v3: v3 keeps the chunk it waits on in registers, which caps how much
data a program has in flight and how long it can wait (one step). Gluon, Triton's lower-level
language (same compiler, layouts stated by hand), can allocate shared memory and copy into it
asynchronously (cp.async, Ampere and later). Here each program keeps LAG + AHEAD + 1 chunks in a
ring: at step k it starts copying the chunk of step k + AHEAD, reduces and publishes the chunk of
step k, and finishes the item of step k - LAG from the ring (exponentiating it again). A row's
partials then have LAG steps to arrive, and AHEAD copies are always in flight.
A chunk is an [R, T, VEC] block: thread t copies VEC contiguous values (16 bytes) in each of R
rounds and reads back exactly what it copied, so its own cp.async.wait_group is all the
synchronisation a buffer needs.
Waiting as in v3: a cooperative launch, and a row's items spanning at most LAG + 1 steps.
Prediction: 16-bit rows gain most (v3's register budget bites hardest there).
Limit: where this rung cannot run (no GPU or Gluon, rows that are not whole 16-byte copies, a
ring too large for shared memory, rows spanning more than LAG + 1 steps) it runs triton-v3.
"""

import dataclasses

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

from phase24.softmax.triton import common, parts, v3_lagged
from phase24.softmax.triton.common import (DEADLINE_NS, LOG2E, Launch, Plan, cdiv, fallback,
                                           next_pow2)
from phase24.softmax.triton.v3_lagged import (end_of_launch, launch_tag, load_words, now, publish,
                                              published, stop_if_late, unpack)

# One copy of 16-byte pieces into shared memory, in flight until waited for (cp.async): Triton 3.9
# names it async_load, 3.6 async_copy_global_to_shared, with the same arguments.
async_load = getattr(cp, "async_load", None) or cp.async_copy_global_to_shared


# --8<-- [start:helpers]
@gluon.jit
def all_threads(flag):
    # 1 if flag is non-zero in every thread of the program, else 0, in every thread: one barrier
    # (bar.red.and), so that all warps take the same way.
    return gl.inline_asm_elementwise(
        "{ .reg .pred p, q; setp.ne.s32 p, $1, 0; bar.red.and.pred q, 0, p; "
        "selp.s32 $0, 1, 0, q; }",
        "=r,r", [flag], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def wait_for_words(w, wptr, tag, DEADLINE):
    # Re-read a row's words until every thread has seen all of them published by this launch.
    # Each warp reads them on its own; one barrier a poll makes the verdict the program's.
    ready = all_threads(gl.min(published(w, tag), axis=0))
    if ready == 0:
        t0 = now()
        while ready == 0:
            stop_if_late(t0, DEADLINE)
            w = gl.inline_asm_elementwise(
                "nanosleep.u32 100;\n\tld.relaxed.gpu.global.b64 $0, [$1];", "=l,l", [wptr],
                dtype=gl.int64, is_pure=False, pack=1)
            ready = all_threads(gl.min(published(w, tag), axis=0))
    return w


@gluon.jit
def combine(m, s):
    # One (max, sum of exp(x - max)) from tensors of such pairs (a chunk of -inf: (-inf, 0)).
    m_all = gl.max(m, axis=0)
    m_safe = gl.where(m_all == float("-inf"), 0.0, m_all)
    return m_all, gl.sum(s * gl.exp2((m - m_safe) * LOG2E), axis=0)


@gluon.constexpr_function
def chunk_layout(num_warps, vec):
    # A chunk as [R, T, VEC]: thread t holds vec contiguous values (16 bytes) in each of R rounds.
    return gl.BlockedLayout([1, 1, vec], [1, 32, 1], [1, num_warps, 1], [2, 1, 0])


@gluon.jit
def chunk_offsets(R: gl.constexpr, VEC: gl.constexpr):
    # (cols, lead): each value's offset in the chunk, and that of the first value of its copy
    # (masks are taken on whole copies).
    T: gl.constexpr = 32 * gl.num_warps()
    blk: gl.constexpr = chunk_layout(gl.num_warps(), VEC)
    r_ = gl.arange(0, R, layout=gl.SliceLayout(1, gl.SliceLayout(2, blk)))
    t_ = gl.arange(0, T, layout=gl.SliceLayout(0, gl.SliceLayout(2, blk)))
    v_ = gl.arange(0, VEC, layout=gl.SliceLayout(0, gl.SliceLayout(1, blk)))
    lead = (gl.expand_dims(gl.expand_dims(r_, 1), 2) * (T * VEC)
            + gl.expand_dims(gl.expand_dims(t_, 0), 2) * VEC)
    return lead + gl.expand_dims(gl.expand_dims(v_, 0), 1), lead
# --8<-- [end:helpers]


# --8<-- [start:kernel]
@gluon.jit
def ring_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S, DEADLINE,
                SEG: gl.constexpr, VEC: gl.constexpr, LAG: gl.constexpr, AHEAD: gl.constexpr,
                PBLOCK: gl.constexpr, EVEN: gl.constexpr):
    # EVEN: N is a multiple of SEG (no value of a chunk is masked). The host sends N and the row
    # stride as multiples of VEC; written so, the compiler knows it too.
    N = N // VEC * VEC
    stride_x = stride_x // VEC * VEC
    STAGES: gl.constexpr = LAG + AHEAD + 1
    R: gl.constexpr = SEG // (32 * gl.num_warps() * VEC)
    blk: gl.constexpr = chunk_layout(gl.num_warps(), VEC)
    every_warp: gl.constexpr = gl.BlockedLayout([PBLOCK // 32], [32], [gl.num_warps()], [0])
    ring = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [STAGES, R, 32 * gl.num_warps(), VEC],
                                     gl.SwizzledSharedLayout(1, 1, 1, order=[2, 1, 0]))
    cols, lead = chunk_offsets(R, VEC)
    lanes = gl.arange(0, PBLOCK, layout=every_warp)  # each warp reads all of a row's words
    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    total = M * S
    tag = launch_tag(ws_ptr)
    words = ws_ptr + 2  # one per item
    for j in gl.static_range(AHEAD):  # the first AHEAD chunks, in flight
        item = pid + j * nprog
        row = item // S
        start = (item - row * S) * SEG
        async_load(ring.index(j), x_ptr + row.to(gl.int64) * stride_x + start
                   + cols, mask=(start + lead < N) & (item < total))
        cp.commit_group()
    for k in range(0, gl.cdiv(total - pid, nprog) + LAG):
        item = pid + k * nprog
        done = pid + gl.maximum(k - LAG, 0) * nprog
        drow = done // S
        wptr = words + drow * S + gl.minimum(lanes, S - 1)  # lanes >= S: a real word
        w = load_words(wptr, True)  # the finished row's words, read early
        nxt = item + AHEAD * nprog
        nrow = nxt // S
        nstart = (nxt - nrow * S) * SEG
        async_load(ring.index((k + AHEAD) % STAGES),
                   x_ptr + nrow.to(gl.int64) * stride_x + nstart + cols,
                   mask=(nstart + lead < N) & (nxt < total))
        cp.commit_group()
        cp.wait_group(AHEAD)  # this step's chunk has landed (the AHEAD younger ones may not)
        # 1. This step's chunk: (max, sum of exp), published.
        if item < total:
            x = ring.index(k % STAGES).load(blk).to(gl.float32)
            if not EVEN:  # (masked copies wrote zeros)
                x = gl.where((item - (item // S) * S) * SEG + lead < N, x, float("-inf"))
            m = gl.max(gl.max(gl.max(x, axis=2), axis=0), axis=0)
            m_safe = gl.where(m == float("-inf"), 0.0, m)
            e = gl.exp2((x - m_safe) * LOG2E)
            publish(words + item, m, gl.sum(gl.sum(gl.sum(e, axis=2), axis=0), axis=0), tag, True)
        # 2. The item of step k - LAG: its row's partials, combined; its chunk, written.
        if k >= LAG:
            w = wait_for_words(w, wptr, tag, DEADLINE)
            pm, ps = unpack(w, lanes < S)
            m_row, s_row = combine(pm, ps)
            dstart = (done - drow * S) * SEG
            x = ring.index((k - LAG) % STAGES).load(blk).to(gl.float32)
            y = gl.exp2((x - m_row) * LOG2E) * (1.0 / s_row)
            gl.store(out_ptr + drow.to(gl.int64) * N + dstart + cols,
                     y.to(out_ptr.dtype.element_ty), mask=dstart + lead < N)
    cp.wait_group(0)
    end_of_launch(ws_ptr)
# --8<-- [end:kernel]


@dataclasses.dataclass(frozen=True)
class Config:
    seg: int        # values per chunk
    num_warps: int
    lag: int        # steps a chunk waits in the ring for its row's partials
    ahead: int      # chunks being copied ahead of the one being reduced


CONFIGS = {4: [Config(4096, 4, 3, 1), Config(4096, 4, 2, 2)],
           2: [Config(4096, 4, 3, 1), Config(4096, 4, 4, 1)]}


def candidates(n: int, elem: int) -> list[Config]:
    return [c for c in CONFIGS[elem] if cdiv(n, c.seg) <= v3_lagged.MAX_CHUNKS]


def gluon_applies(x2d, out, smem_bytes: int) -> str:
    """'' when a Gluon rung of this lab with smem_bytes of shared memory per program runs on
    x2d; else why not."""
    vec = 16 // x2d.element_size()
    if common.INTERPRETED or not x2d.is_cuda:
        return "Gluon has no interpreter"
    if common.capability(x2d.device)[0] < 8:
        return "cp.async needs compute capability 8.0 or later"
    if smem_bytes + 1024 > common.smem_per_block(x2d.device):
        return f"{smem_bytes} bytes of shared memory a program do not fit this GPU"
    if x2d.shape[1] % vec or x2d.stride(0) % vec or x2d.data_ptr() % 16 or out.data_ptr() % 16:
        return "rows that are not whole 16-byte copies"
    return ""


def decide(x2d, out, config: Config | None = None) -> Plan:
    m, n = x2d.shape
    elem = x2d.element_size()
    c = config or CONFIGS[elem][0]
    s = cdiv(n, c.seg)
    why = gluon_applies(x2d, out, (c.lag + c.ahead + 1) * c.seg * elem)
    if not why and s > v3_lagged.MAX_CHUNKS:
        why = f"{s} chunks a row > {v3_lagged.MAX_CHUNKS}"
    if why:
        return fallback(v3_lagged.decide(x2d, out), f"triton-v4: {why}")
    split = parts.split_rows(decide, x2d, out, config, s, scratch=True, rung="triton-v4",
                              items="chunks")  # a word a chunk; items + a few grids < 2^31
    if split:
        return split
    meta = dict(SEG=c.seg, VEC=16 // elem, LAG=c.lag, AHEAD=c.ahead,
                PBLOCK=max(32, next_pow2(s)), EVEN=n % c.seg == 0, num_warps=c.num_warps,
                launch_cooperative_grid=True)
    k = Launch("triton-v4", ring_kernel, 1, (m, n, x2d.stride(0), s, DEADLINE_NS), meta)
    ws = common.exchange_words(x2d.device, m * s)
    grid = min(m * s, common.resident_per_sm(k, (x2d, out, ws)) * common.num_sms(x2d.device))
    if s - 1 > c.lag * grid:
        return fallback(v3_lagged.decide(x2d, out), f"triton-v4: rows of {s} chunks span more "
                        f"than {c.lag + 1} steps of {grid} resident programs")
    return Plan((dataclasses.replace(k, grid=grid),), launch, scratch="exchange", words=m * s)


def launch(p: Plan, x2d, out, ws) -> list:
    (k,) = p.launches  # ws: this stream's exchange words (common.exchange_words)
    return [ring_kernel[(k.grid,)](x2d, out, ws, *k.args, **k.meta)]


def softmax_rows(x2d, out, config: Config | None = None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)
