"""triton-v3: long rows in one launch, each value read once: programs trade partials and wait.

What changed from triton-v2: v2 reads every value twice because a chunk's program cannot know
its row's total until every chunk is reduced, and only a second launch waits for that. Here the
programs of one launch wait for each other instead. Item i is chunk i % S of row i // S; program
p takes items p, p + P, p + 2P, ... (P programs), one per step. At step k it reduces the chunk of
its k-th item, publishes that partial (max, sum) as one word of the exchange scratch (see
common.py: each word carries the launch's parity, so nothing is zeroed between launches), starts
loading its next chunk, and then finishes the item of step k - 1: it reads the S partials of
that row, which the row's other programs published during the step, and writes the chunk it
kept in registers (as exp(x - chunk max): only a rescale is left).
Waiting is safe only if every program a wait needs runs: the launch is cooperative (the driver
guarantees every program resident at once, or refuses it), and a row's items must span at most
two steps (S - 1 <= P); elsewhere this rung runs triton-v2. The interpreter runs programs one
after another, so there: one program, and rows of at most two chunks.
16-bit rows are loaded and stored as 32-bit words of two values (PAIRS) where the row and its
start allow it: the chunk in flight takes half the registers.
Prediction: one read instead of two: from v2's 2/3 of copy towards the copy itself.
Limit: rows of at most MAX_CHUNKS chunks that span at most two steps of the programs resident
at once; elsewhere triton-v2 runs. More chunks than one launch takes run in parts of the rows
(parts.py).
"""

import dataclasses

import torch
import triton
import triton.language as tl

from phase24.softmax.triton import common, parts, v2_split
from phase24.softmax.triton.common import (DEADLINE_NS, HEAD, INTERPRETED, LOG2E, Launch, Plan,
                                           cdiv, fallback, next_pow2)

MAX_CHUNKS = 256  # a row's partials are read in one load of at most this many lanes
NEG_INF_PAIR = {torch.bfloat16: 0xFF80FF80 - 2**32, torch.float16: 0xFC00FC00 - 2**32}


# --8<-- [start:exchange]
@triton.jit
def load_words(ptrs, GPU: tl.constexpr):
    # Words other programs of this launch may be writing: relaxed loads at GPU scope (not from a
    # stale L1 line).
    if GPU:
        return tl.inline_asm_elementwise("ld.relaxed.gpu.global.b64 $0, [$1];", "=l,l", [ptrs],
                                         dtype=tl.int64, is_pure=False, pack=1)
    else:
        return tl.load(ptrs)


@triton.jit
def publish(ptr, m, s, tag, GPU: tl.constexpr):
    # A partial (max, sum) as one word, stored by one thread: the max's bits high, the sum's low,
    # the launch's parity (tag) in bit 31, the sum's sign bit (a sum is never negative).
    w = ((m.to(tl.int32, bitcast=True).to(tl.int64) << 32)
         | (s.to(tl.int32, bitcast=True).to(tl.int64) & 0x7FFFFFFF) | tag)
    if GPU:
        tl.inline_asm_elementwise(
            "{ .reg .pred p; .reg .u32 t; mov.u32 t, %tid.x; setp.eq.u32 p, t, 0;\n\t"
            "@p st.relaxed.gpu.global.b64 [$1], $2; mov.u32 $0, 0; }",
            "=r,l,l", [ptr, w], dtype=tl.int32, is_pure=False, pack=1)
    else:
        tl.store(ptr, w)


@triton.jit
def published(w, tag):
    # 1 where a word carries this launch's parity: the previous launch left the other one.
    return ((w & 0x80000000) == tag).to(tl.int32)


@triton.jit
def unpack(w, valid):
    # The (max, sum) pairs of a row's published words; lanes not valid: (-inf, 0).
    m = tl.where(valid, (w >> 32).to(tl.int32).to(tl.float32, bitcast=True), float("-inf"))
    s = tl.where(valid, (w & 0x7FFFFFFF).to(tl.int32).to(tl.float32, bitcast=True), 0.0)
    return m, s


@triton.jit
def launch_tag(ws_ptr):
    # This launch's parity in bit 31: the first launch on a zeroed buffer writes 1 over zeros.
    return ((tl.load(ws_ptr) + 1) & 1) << 31


@triton.jit
def now():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def stop_if_late(t0, limit):
    # The host made every wait finite; one that lasts `limit` ns is a bug: stop the kernel with
    # an error (trap) rather than hang.
    tl.inline_asm_elementwise(
        "{ .reg .u64 t; .reg .pred p; mov.u64 t, %globaltimer; sub.u64 t, t, $1;\n\t"
        "setp.gt.u64 p, t, $2; @p trap; mov.u32 $0, 0; }",
        "=r,l,l", [t0, limit.to(tl.int64)], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def end_of_launch(ws_ptr):
    # ws_ptr: [launches counted, programs finished]. The last program to finish counts the
    # launch, which flips the parity, and resets the count: the words are ready for the next one.
    if tl.atomic_add(ws_ptr + 1, 1, sem="acq_rel") == tl.num_programs(0) - 1:
        tl.store(ws_ptr + 1, 0)
        tl.store(ws_ptr, tl.load(ws_ptr) + 1)
# --8<-- [end:exchange]


@triton.jit
def _all(flag, spread):
    # 1 if flag is 1 in every thread: reduced over `spread`, a tensor that spans every warp, so
    # that warps which read the words a moment apart still take the same way.
    return tl.min(flag + tl.zeros_like(spread), axis=0)


# --8<-- [start:kernel]
@triton.jit
def lagged_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S, DEADLINE,
                  SEG: tl.constexpr, PAIRS: tl.constexpr, NEG_PAIR: tl.constexpr,
                  PBLOCK: tl.constexpr, GPU: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    total = M * S
    dt = x_ptr.dtype.element_ty
    tag = launch_tag(ws_ptr)
    words = ws_ptr + 2  # one per item
    if PAIRS:  # the chunk as SEG // 2 words of two 16-bit values
        xs = x_ptr.to(tl.pointer_type(tl.int32))
        os = out_ptr.to(tl.pointer_type(tl.int32))
        units = tl.arange(0, SEG // 2)
        n_u = N // 2
        stride_u = stride_x // 2
        pad = NEG_PAIR  # two -inf
    else:
        xs = x_ptr
        os = out_ptr
        units = tl.arange(0, SEG)
        n_u = N
        stride_u = stride_x
        pad = float("-inf")
    seg_u = units.shape[0]
    lanes = tl.arange(0, PBLOCK)
    row = pid // S
    offs = (pid - row * S) * seg_u + units
    x_next = tl.load(xs + row.to(tl.int64) * stride_u + offs, mask=offs < n_u, other=pad)
    kept = tl.zeros_like(units).to(tl.float32)  # step k - 1's chunk, as exp(x - kept_max)
    if PAIRS:
        kept_hi = tl.zeros_like(units).to(tl.float32)  # (the odd values)
    kept_max = tl.zeros([], tl.float32)
    for k in range(0, tl.cdiv(total - pid, nprog) + 1):
        item = pid + k * nprog
        done = item - nprog  # the item finished in part 2
        drow = tl.maximum(done, 0) // S
        wptr = words + drow * S + tl.minimum(lanes, S - 1)  # lanes >= S: a real word
        w = load_words(wptr, GPU)  # read early: they arrive during part 1
        # 1. This step's chunk: its (max, sum of exp), published; kept as exponentials.
        if PAIRS:
            x = x_next.to(tl.int16).to(dt, bitcast=True).to(tl.float32)
            x_hi = (x_next >> 16).to(tl.int16).to(dt, bitcast=True).to(tl.float32)
            m = tl.max(tl.maximum(x, x_hi), axis=0)
        else:
            x = x_next.to(tl.float32)
            m = tl.max(x, axis=0)
        m_safe = tl.where(m == float("-inf"), 0.0, m)  # a chunk of -inf: exp(-inf - 0) = 0
        keep = tl.exp2((x - m_safe) * LOG2E)
        s = tl.sum(keep, axis=0)
        if PAIRS:
            keep_hi = tl.exp2((x_hi - m_safe) * LOG2E)
            s += tl.sum(keep_hi, axis=0)
        if item < total:
            publish(words + item, m, s, tag, GPU)
        # The next step's chunk starts loading now, in flight during part 2.
        nxt = item + nprog
        nrow = nxt // S
        noffs = (nxt - nrow * S) * seg_u + units
        x_next = tl.load(xs + nrow.to(tl.int64) * stride_u + noffs,
                         mask=(noffs < n_u) & (nxt < total), other=pad)
        # 2. The item of step k - 1: its row's partials, combined; its chunk, written.
        if done >= 0:
            ready = _all(tl.min(published(w, tag), axis=0), units)
            if ready == 0:
                if GPU:
                    t0 = now()
                    while ready == 0:
                        stop_if_late(t0, DEADLINE)
                        w = load_words(wptr, GPU)
                        ready = _all(tl.min(published(w, tag), axis=0), units)
                else:  # (the interpreter: the host made this wait needless; a few polls, then NaN)
                    spins = 0
                    while (ready == 0) & (spins < 8):
                        w = load_words(wptr, GPU)
                        ready = _all(tl.min(published(w, tag), axis=0), units)
                        spins += 1
            pm, ps = unpack(w, lanes < S)
            m_row = tl.max(pm, axis=0)
            s_row = tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
            # kept_max is the chunk's true max: -inf for a chunk of -inf, whose exponentials
            # are 0 and weigh exp(-inf - m_row) = 0 (a row of -inf: NaN, as in torch).
            scale = tl.exp2((kept_max - m_row) * LOG2E) / s_row
            if not GPU:
                scale = tl.where(ready != 0, scale, float("nan"))
            doffs = (done - drow * S) * seg_u + units
            if PAIRS:
                y_lo = kept * scale
                y_hi = kept_hi * scale
                if GPU:  # round both to 16 bits and pack them in one instruction
                    y = tl.inline_asm_elementwise(
                        "cvt.rn.bf16x2.f32 $0, $1, $2;" if dt == tl.bfloat16
                        else "cvt.rn.f16x2.f32 $0, $1, $2;",
                        "=r,r,r", [y_hi, y_lo], dtype=tl.int32, is_pure=True, pack=1)
                else:
                    y = ((y_lo.to(dt).to(tl.int16, bitcast=True).to(tl.int32) & 0xFFFF)
                         | (y_hi.to(dt).to(tl.int16, bitcast=True).to(tl.int32) << 16))
            else:
                y = (kept * scale).to(dt)
            tl.store(os + drow.to(tl.int64) * n_u + doffs, y, mask=doffs < n_u)
        kept = keep
        if PAIRS:
            kept_hi = keep_hi
        kept_max = m
    end_of_launch(ws_ptr)
# --8<-- [end:kernel]


@dataclasses.dataclass(frozen=True)
class Config:
    seg: int          # values per chunk
    num_warps: int
    maxnreg: int = 0  # a cap on registers per thread (0: ptxas chooses)


# The few-rows default first; a cap of 72 registers gives float32 7 programs per SM instead of 5.
CONFIGS = {4: [Config(2048, 4, 72), Config(1024, 2, 72), Config(2048, 4, 80)],
           2: [Config(2048, 2), Config(1024, 1), Config(4096, 4)]}


def candidates(n: int, elem: int) -> list[Config]:
    return [c for c in CONFIGS[elem] if cdiv(n, c.seg) <= MAX_CHUNKS]


def decide(x2d, out, config: Config | None = None) -> Plan:
    m, n = x2d.shape
    elem = x2d.element_size()
    c = config or CONFIGS[elem][0]
    s = cdiv(n, c.seg)
    if s > MAX_CHUNKS:
        return fallback(v2_split.decide(x2d, out), f"triton-v3: {s} chunks a row > {MAX_CHUNKS}")
    if INTERPRETED and s > 2:  # (one program there: see below)
        return fallback(v2_split.decide(x2d, out),
                        "triton-v3: the interpreter runs one program at a time, and "
                        f"rows of {s} chunks > 2 would wait for another")
    split = parts.split_rows(decide, x2d, out, config, s, scratch=True, rung="triton-v3",
                              items="chunks")  # a word a chunk; items + a few grids < 2^31
    if split:
        return split
    pairs = (elem == 2 and n % 2 == 0 and x2d.stride(0) % 2 == 0 and x2d.data_ptr() % 4 == 0
             and out.data_ptr() % 4 == 0)
    meta = dict(SEG=c.seg, PAIRS=pairs, NEG_PAIR=NEG_INF_PAIR[x2d.dtype] if pairs else 0,
                PBLOCK=max(16, next_pow2(s)), GPU=not INTERPRETED, num_warps=c.num_warps)
    k = Launch("triton-v3", lagged_kernel, 1, (m, n, x2d.stride(0), s, DEADLINE_NS), meta)
    total = m * s
    if INTERPRETED:  # programs run one after another: one program, whose waits it satisfies
        grid = 1
    else:
        if c.maxnreg:
            meta["maxnreg"] = c.maxnreg
        meta["launch_cooperative_grid"] = True
        ws = common.exchange_words(x2d.device, total)
        per_sm = common.resident_per_sm(k, (x2d, out, ws))
        grid = min(total, per_sm * common.num_sms(x2d.device))
        if s - 1 > grid:
            return fallback(v2_split.decide(x2d, out),
                            f"triton-v3: rows of {s} chunks span more than two steps of "
                            f"{grid} resident programs")
    return Plan((dataclasses.replace(k, grid=grid),), launch, scratch="exchange", words=total)


def launch(p: Plan, x2d, out, ws) -> list:
    (k,) = p.launches  # ws: this stream's exchange words (common.exchange_words)
    return [lagged_kernel[(k.grid,)](x2d, out, ws, *k.args, **k.meta)]


def softmax_rows(x2d, out, config: Config | None = None) -> None:
    """The starter's contract (labs/starters/my_softmax.py): decided once per key, then launched."""
    common.launch_rows(decide, x2d, out, config)


assert HEAD == 2  # the kernel's words start after [launches, finished]
