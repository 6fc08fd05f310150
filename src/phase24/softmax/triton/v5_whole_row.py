"""triton-v5: the whole row in shared memory, in one program or in the slices of a group (Gluon).

What changed from triton-v4: v4 reads each chunk from shared memory twice and exponentiates it
twice, and its items of one row are spread over many programs, which must all publish before any
can finish. Here a program holds a whole row (SPLIT = 1), or each of a group of SPLIT programs
holds one slice of it, in NCH chunks of [R, T, VEC] 16-byte copies (v4's layout). For each row:
(A) as each chunk lands, each thread folds its values into its own running (max, sum); one
reduction across the program gives the slice's; (B) each chunk is written out, and the next row's
chunk is copied into its buffer. A group trades its slices' (max, sum) through exchange words, as
v3 and v4 do, and each of its programs holds two rows: (B) of a row comes after (A) of the next,
so the wait for the group overlaps that row's copies. Programs stride over rows (a persistent
grid); a group's programs must be resident together (a cooperative launch).
Prediction: fewer barriers and no partials per chunk: 16-bit long rows, the hardest for v4,
gain a few points of the copy bandwidth.
Limit: where this rung cannot run (no GPU or Gluon, rows that are not whole 16-byte copies, a
slice too large for shared memory, a group not resident at once) it runs triton-v4.
"""

import dataclasses

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

from phase24.softmax.triton import common, parts, v4_ring
from phase24.softmax.triton.common import DEADLINE_NS, LOG2E, Launch, Plan, cdiv, fallback
from phase24.softmax.triton.v3_lagged import (end_of_launch, launch_tag, load_words, publish,
                                              unpack)
from phase24.softmax.triton.v4_ring import (async_load, chunk_layout, chunk_offsets, combine,
                                            wait_for_words)

MAX_SPLIT = 32           # a warp's lanes read a group's words
SLICE_BYTES = 32 * 1024  # the slice a program of a group holds, for the default configuration


# --8<-- [start:kernel]
@gluon.jit
def whole_row_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, DEADLINE,
                     VEC: gl.constexpr, R: gl.constexpr, NCH: gl.constexpr,
                     SPLIT: gl.constexpr, EVEN: gl.constexpr):
    # Programs g * SPLIT + j (j = 0 .. SPLIT - 1) hold slice j of rows g, g + groups, ...
    # EVEN: every slice is full (no value masked). N and the row stride: multiples of VEC.
    N = N // VEC * VEC
    stride_x = stride_x // VEC * VEC
    T: gl.constexpr = 32 * gl.num_warps()
    SEG: gl.constexpr = R * T * VEC
    HELD: gl.constexpr = 1 if SPLIT == 1 else 2  # rows held at once
    LAG: gl.constexpr = HELD - 1                 # (B) of row k comes after (A) of row k + LAG
    blk: gl.constexpr = chunk_layout(gl.num_warps(), VEC)
    per_thread: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(2, blk))
    every_warp: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    bufs = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [HELD * NCH, R, T, VEC],
                                     gl.SwizzledSharedLayout(1, 1, 1, order=[2, 1, 0]))
    cols, lead = chunk_offsets(R, VEC)
    lanes = gl.arange(0, 32, layout=every_warp)  # each warp reads all of a group's words
    pid = gl.program_id(0)
    groups = gl.num_programs(0) // SPLIT
    first = pid // SPLIT
    n_rows = gl.cdiv(M - first, groups)  # this program's rows: first, first + groups, ...
    start = (pid % SPLIT) * (NCH * SEG)  # its slice of each row
    tag = launch_tag(ws_ptr)
    words = ws_ptr + 2  # one per (row, slice)
    for h in gl.static_range(HELD):
        row = first + h * groups
        for c in gl.static_range(NCH):
            async_load(bufs.index(h * NCH + c),
                       x_ptr + row.to(gl.int64) * stride_x + start + c * SEG
                       + cols, mask=(start + c * SEG + lead < N) & (row < M))
            cp.commit_group()
    m_row = gl.full([], float("-inf"), gl.float32)
    s_row = gl.zeros([], gl.float32)
    for k in range(0, n_rows + LAG):
        if k < n_rows:  # (A) row k's slice: its (max, sum of exp), each thread's values first
            row = first + k * groups
            buf = (k % HELD) * NCH
            m_t = gl.full([T], float("-inf"), gl.float32, layout=per_thread)
            s_t = gl.zeros([T], gl.float32, layout=per_thread)
            for c in gl.static_range(NCH):
                cp.wait_group(NCH - 1 - c)  # chunk c has landed
                x = bufs.index(buf + c).load(blk).to(gl.float32)
                if not EVEN:  # (masked copies wrote zeros)
                    x = gl.where(start + c * SEG + lead < N, x, float("-inf"))
                m_new = gl.maximum(m_t, gl.max(gl.max(x, axis=2), axis=0))
                m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
                e = gl.exp2((x - gl.expand_dims(gl.expand_dims(m_safe, 0), 2)) * LOG2E)
                s_t = s_t * gl.exp2((m_t - m_safe) * LOG2E) + gl.sum(gl.sum(e, axis=2), axis=0)
                m_t = m_new
            m_row, s_row = combine(m_t, s_t)
            if SPLIT > 1:
                publish(words + row * SPLIT + pid % SPLIT, m_row, s_row, tag, True)
        if k >= LAG:  # (B) row k - LAG: written out; its buffers take row k - LAG + HELD
            row = first + (k - LAG) * groups
            buf = ((k - LAG) % HELD) * NCH
            if SPLIT > 1:  # the row's (max, sum) from its group's words
                wptr = words + row * SPLIT + gl.minimum(lanes, SPLIT - 1)
                w = wait_for_words(load_words(wptr, True), wptr, tag, DEADLINE)
                pm, ps = unpack(w, lanes < SPLIT)
                m_row, s_row = combine(pm, ps)
            inv = 1.0 / s_row
            nrow = row + HELD * groups
            for c in gl.static_range(NCH):
                x = bufs.index(buf + c).load(blk).to(gl.float32)
                y = gl.exp2((x - m_row) * LOG2E) * inv
                gl.store(out_ptr + row.to(gl.int64) * N + start + c * SEG + cols,
                         y.to(out_ptr.dtype.element_ty), mask=start + c * SEG + lead < N)
                async_load(bufs.index(buf + c),
                           x_ptr + nrow.to(gl.int64) * stride_x + start
                           + c * SEG + cols,
                           mask=(start + c * SEG + lead < N) & (nrow < M))
                cp.commit_group()
    cp.wait_group(0)
    if SPLIT > 1:
        end_of_launch(ws_ptr)
# --8<-- [end:kernel]


@dataclasses.dataclass(frozen=True)
class Config:
    seg: int        # values per chunk: 32 x num_warps x 16 bytes x R
    num_warps: int
    split: int = 1  # programs that share a row (a slice each)


def default_config(n: int, elem: int) -> Config:
    """One program per row up to 64 KB rows; beyond, slices of SLICE_BYTES (at most MAX_SPLIT)."""
    if n * elem <= 64 * 1024:
        return Config(4096, 8)
    return Config(2048, 4, min(MAX_SPLIT, cdiv(n * elem, SLICE_BYTES)))


def candidates(n: int, elem: int) -> list[Config]:
    """What scripts/tune.py softmax triton times: one program per row where the row takes at most
    192 KB; groups of 4 to MAX_SPLIT programs holding SLICE_BYTES each where that divides it."""
    out = [c for c in (Config(8192, 8), Config(4096, 8), Config(8192, 16))
           if _layout(c, n, elem)[1] <= 192 * 1024]
    split = n * elem // SLICE_BYTES
    if 4 <= split <= MAX_SPLIT and n * elem % SLICE_BYTES == 0:
        out += [Config(2048, 4, split), Config(4096, 4, split)]
    return out


def _layout(c: Config, n: int, elem: int) -> tuple[int, int]:
    """(chunks a slice, shared memory a program in bytes): a program holds one row (split 1)
    or two slices."""
    nch = cdiv(cdiv(n, c.split), c.seg)
    return nch, (1 if c.split == 1 else 2) * nch * c.seg * elem


def decide(x2d, out, config: Config | None = None) -> Plan:
    m, n = x2d.shape
    elem = x2d.element_size()
    c = config or default_config(n, elem)
    vec = 16 // elem
    nch, smem = _layout(c, n, elem)
    why = v4_ring.gluon_applies(x2d, out, smem)
    if not why and (c.seg % (32 * c.num_warps * vec) or c.split > MAX_SPLIT):
        why = f"chunks of {c.seg} values are not whole copies for {c.num_warps} warps, or " \
              f"more than {MAX_SPLIT} programs share a row"
    if why:
        return fallback(v4_ring.decide(x2d, out), f"triton-v5: {why}")
    split = parts.split_rows(decide, x2d, out, config, c.split, scratch=c.split > 1,
                              rung="triton-v5", items="slices")  # rows + a few grids < 2^31
    if split:
        return split
    meta = dict(VEC=vec, R=c.seg // (32 * c.num_warps * vec), NCH=nch, SPLIT=c.split,
                EVEN=n == c.split * nch * c.seg, num_warps=c.num_warps)
    if c.split > 1:
        meta["launch_cooperative_grid"] = True
    k = Launch("triton-v5", whole_row_kernel, 1, (m, n, x2d.stride(0), DEADLINE_NS), meta)
    words = m * c.split if c.split > 1 else 0
    ws = common.exchange_words(x2d.device, words)
    groups = (common.resident_per_sm(k, (x2d, out, ws))
              * common.num_sms(x2d.device)) // c.split
    if groups < 1:
        return fallback(v4_ring.decide(x2d, out), f"triton-v5: a group of {c.split} programs is "
                        "not resident at once on this GPU")
    return Plan((dataclasses.replace(k, grid=min(m, groups) * c.split),), launch,
                scratch="exchange", words=words)


def launch(p: Plan, x2d, out, ws) -> list:
    (k,) = p.launches  # ws: this stream's exchange words (common.exchange_words)
    return [whole_row_kernel[(k.grid,)](x2d, out, ws, *k.args, **k.meta)]


def softmax_rows(x2d, out, config: Config | None = None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)
