"""Gluon kernels for long rows: ``ring_kernel`` and ``whole_row_kernel``.

Gluon is Triton's lower-level language (``triton.experimental.gluon``, same compiler, same
package): the programmer states each tensor's layout across threads and may allocate shared
memory and copy into it asynchronously. That is what plain Triton cannot express, and what
``lagged_kernel`` lacks for 16-bit rows: there, the chunk a program keeps until its row's
partials arrive lives in registers, which caps how much data is in flight and how long a
program can wait (one step). ``ring_kernel`` keeps the chunks in a ring of shared-memory buffers
filled with ``cp.async`` (Ampere and later): AHEAD chunks are in flight, LAG chunks wait for their
rows' partials, one is being reduced. ``whole_row_kernel`` holds a whole row in shared memory, in
one program or in the slices of a group of programs. Gluon has no interpreter: these kernels run
on a GPU only.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

LOG2E = gl.constexpr(1.4426950408889634)


@gluon.jit
def _relaxed_load(ptrs):
    return gl.inline_asm_elementwise("ld.relaxed.gpu.global.b64 $0, [$1];", "=l,l", [ptrs],
                                     dtype=gl.int64, is_pure=False, pack=1)


@gluon.jit
def _now():
    return gl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=gl.int64,
                                     is_pure=False, pack=1)


@gluon.jit
def _all_threads(flag):
    # 1 if flag is non-zero in every thread of the program, else 0, in every thread: one
    # barrier (bar.red.and), so that all warps take the same way.
    return gl.inline_asm_elementwise(
        "{ .reg .pred p, q; setp.ne.s32 p, $1, 0; bar.red.and.pred q, 0, p; "
        "selp.s32 $0, 1, 0, q; }",
        "=r,r", [flag], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _chunk_stats(x, FOLD: gl.constexpr):
    # (max, sum of exp(x - max)) of a [R, T, VEC] chunk. A chunk of only -inf gives (-inf, 0).
    m = gl.max(gl.max(gl.max(x, axis=2), axis=0), axis=0)
    m_safe = gl.where(m == float("-inf"), 0.0, m)
    if FOLD:
        e = gl.exp2(x * LOG2E - m_safe * LOG2E)
    else:
        e = gl.exp2((x - m_safe) * LOG2E)
    return m, gl.sum(gl.sum(gl.sum(e, axis=2), axis=0), axis=0)


@gluon.jit
def _merge(m1, s1, m2, s2):
    # Two (max, sum of exp(x - max)) pairs into one.
    m = gl.maximum(m1, m2)
    m_safe = gl.where(m == float("-inf"), 0.0, m)
    return m, s1 * gl.exp2((m1 - m_safe) * LOG2E) + s2 * gl.exp2((m2 - m_safe) * LOG2E)


@gluon.jit
def _combine(m, s):
    # One (max, sum of exp(x - max)) from a tensor of such pairs, along axis 0.
    m_all = gl.max(m, axis=0)
    m_safe = gl.where(m_all == float("-inf"), 0.0, m_all)
    return m_all, gl.sum(s * gl.exp2((m - m_safe) * LOG2E), axis=0)


@gluon.jit
def _publish(ptr, m, s, tag):
    # A partial (max, sum) as one 64-bit word, stored by one thread: the max's bits high, the
    # sum's low, with the launch's parity (tag) in bit 31 (the sum's sign bit, otherwise 0).
    word = ((m.to(gl.int32, bitcast=True).to(gl.int64) << 32)
            | (s.to(gl.int32, bitcast=True).to(gl.int64) & 0x7FFFFFFF) | tag)
    gl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .u32 t; mov.u32 t, %tid.x; setp.eq.u32 p, t, 0;\n\t"
        "@p st.relaxed.gpu.global.b64 [$1], $2; mov.u32 $0, 0; }",
        "=r,l,l", [ptr, word], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _wait_for_words(p, pptr, tag, abort, WAIT_NS):
    # p: the words at pptr (a row's partials) as first read. Re-read until every thread has seen
    # all of them published by this launch, or the program stops waiting (after WAIT_NS, or once
    # any program has set the abort flag). Each warp reads the words on its own; one barrier per
    # poll makes the verdict one for the program. Returns (the words, 1 if all arrived else 0).
    ready = _all_threads(gl.min(((p & (1 << 31)) == tag).to(gl.int32), axis=0))
    if ready == 0:
        stop = 0
        t0 = _now()
        while (ready == 0) & (stop == 0):
            p = gl.inline_asm_elementwise(
                "nanosleep.u32 100;\n\tld.relaxed.gpu.global.b64 $0, [$1];",
                "=l,l", [pptr], dtype=gl.int64, is_pure=False, pack=1)
            late = (gl.load(abort, volatile=True) != 0) | (_now() - t0 > WAIT_NS)
            ready = _all_threads(gl.min(((p & (1 << 31)) == tag).to(gl.int32), axis=0))
            stop = 1 - _all_threads(1 - late.to(gl.int32))  # late anywhere: stop
    return p, ready


@gluon.jit
def _stats_of_words(p, valid):
    # A row's (max, sum of exp) from its partials' words (those where valid).
    pm = gl.where(valid, (p >> 32).to(gl.int32).to(gl.float32, bitcast=True), float("-inf"))
    ps = gl.where(valid, (p & 0x7FFFFFFF).to(gl.int32).to(gl.float32, bitcast=True), 0.0)
    return _combine(pm, ps)


@gluon.jit
def _stats_from_dram(x_row, N, cols, lead, SEG: gl.constexpr):
    # The slow way: a row's (max, sum of exp) read from global memory, a [R, T, VEC] chunk at a
    # time (cols, lead: as in the kernels).
    m_row = gl.full([], float("-inf"), gl.float32)
    s_row = gl.zeros([], gl.float32)
    for c in range(0, N, SEG):
        xc = gl.load(x_row + c + cols, mask=c + lead < N, other=float("-inf")).to(gl.float32)
        mc, sc = _chunk_stats(xc, False)
        m_row, s_row = _merge(m_row, s_row, mc, sc)
    return m_row, s_row


@gluon.jit
def _end_of_launch(ws_ptr, nprog):
    # ws_ptr: [launches so far, programs finished, abort flag]. The last program to finish
    # resets the count and the flag and counts the launch, leaving the workspace ready for the
    # next launch (so the kernel can be replayed in a CUDA graph).
    if gl.atomic_add(ws_ptr + 1, 1, sem="acq_rel") == nprog - 1:
        gl.store(ws_ptr + 1, 0)
        gl.store(ws_ptr + 2, 0)
        gl.store(ws_ptr, gl.load(ws_ptr) + 1)


@gluon.jit
def _item(pid, k, nprog, GROUP: gl.constexpr):
    # The item (chunk) of a program's step k: programs take segments of GROUP consecutive
    # chunks in turn (segments pid, pid + nprog, ...), one chunk a step.
    return (pid + (k // GROUP) * nprog) * GROUP + k % GROUP


# --8<-- [start:ring_kernel]
@gluon.jit
def ring_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S, WAIT_NS,
                SEG: gl.constexpr, VEC: gl.constexpr, LAG: gl.constexpr, AHEAD: gl.constexpr,
                PBLOCK: gl.constexpr, EVEN: gl.constexpr, FOLD: gl.constexpr,
                GROUP: gl.constexpr):
    # As lagged_kernel (items, partial words, give-up and redo), with the chunks in shared
    # memory. At step k a program starts copying the chunk of step k + AHEAD into a ring of
    # LAG + AHEAD + 1 buffers, reduces and publishes the chunk of step k, and finishes the item
    # of step k - LAG from the ring (exponentiating it again). A chunk is a [R, T, VEC] block:
    # thread t copies VEC contiguous values (16 bytes) in each of R rounds, and reads back
    # exactly the values it copied, so its own cp.async.wait_group is all the synchronisation
    # a buffer needs.
    # FOLD (16-bit outputs): exp2(x * log2e - b), one FFMA before the exp2, with the max (and
    # in part 2 the log of the row's sum) folded into b; rounding x * log2e costs ~1e-7 |x|
    # relative, far below a 16-bit output's rounding.
    # GROUP: a program takes GROUP consecutive chunks of a row in a row (a segment, S a multiple
    # of GROUP) and publishes one partial for the segment: S // GROUP partials per row.
    # EVEN: N is a multiple of SEG (no value of a chunk is masked).
    # The host sends N and the row stride as multiples of VEC (whole 16-byte copies); written
    # so, the compiler knows it too.
    N = N // VEC * VEC
    stride_x = stride_x // VEC * VEC
    STAGES: gl.constexpr = LAG + AHEAD + 1
    T: gl.constexpr = 32 * gl.num_warps()
    R: gl.constexpr = SEG // (T * VEC)
    blk: gl.constexpr = gl.BlockedLayout([1, 1, VEC], [1, 32, 1], [1, gl.num_warps(), 1],
                                         [2, 1, 0])
    every_warp: gl.constexpr = gl.BlockedLayout([PBLOCK // 32], [32], [gl.num_warps()], [0])
    ring = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [STAGES, R, T, VEC],
                                     gl.SwizzledSharedLayout(1, 1, 1, order=[2, 1, 0]))
    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    total = M * S
    dt = x_ptr.dtype.element_ty
    r_ = gl.arange(0, R, layout=gl.SliceLayout(1, gl.SliceLayout(2, blk)))
    t_ = gl.arange(0, T, layout=gl.SliceLayout(0, gl.SliceLayout(2, blk)))
    v_ = gl.arange(0, VEC, layout=gl.SliceLayout(0, gl.SliceLayout(1, blk)))
    lead = (gl.expand_dims(gl.expand_dims(r_, 1), 2) * (T * VEC)     # [R, T, 1]: the first
            + gl.expand_dims(gl.expand_dims(t_, 0), 2) * VEC)        # value of each copy
    cols = lead + gl.expand_dims(gl.expand_dims(v_, 0), 1)          # (masks on whole copies)
    pidx = gl.arange(0, PBLOCK, layout=every_warp)  # each warp reads all of a row's words
    # ws_ptr: int64 [launches so far, programs finished, abort flag, one partial per segment
    # (room for one per item), one mark per item], zeroed once. Nothing is zeroed between
    # launches: a partial carries the parity of its launch in bit 31 (the sign bit of its sum,
    # otherwise always 0), so a word left by the previous launch reads as "not yet"; the last
    # program to finish resets the counter and the abort flag and counts the launch (so the
    # kernel can be replayed in a CUDA graph); a program clears the marks of the items it redid.
    tag = ((gl.load(ws_ptr) + 1) & 1) << 31  # the first launch writes 1 over the zeros
    abort = ws_ptr + 2
    words = ws_ptr + 3
    marks = words + total
    SG = S // GROUP  # partials per row
    n_steps = gl.cdiv(total // GROUP - pid, nprog) * GROUP
    for j in gl.static_range(AHEAD):
        item = _item(pid, j, nprog, GROUP)
        row = item // S
        start = (item - row * S) * SEG
        cp.async_copy_global_to_shared(ring.index(j), x_ptr + row.to(gl.int64) * stride_x + start
                                       + cols, mask=(start + lead < N) & (item < total))
        cp.commit_group()
    gave_up = 0
    m_seg = gl.full([], float("-inf"), gl.float32)  # the segment so far (GROUP > 1)
    s_seg = gl.zeros([], gl.float32)
    for k in range(0, n_steps + LAG):
        item = _item(pid, k, nprog, GROUP)
        done = _item(pid, gl.maximum(k - LAG, 0), nprog, GROUP)
        drow = done // S
        pptr = words + drow * SG + gl.minimum(pidx, SG - 1)  # lanes >= SG re-read a real word
        p = _relaxed_load(pptr)  # the finished row's partials, read early
        nxt = _item(pid, k + AHEAD, nprog, GROUP)
        nrow = nxt // S
        nstart = (nxt - nrow * S) * SEG
        cp.async_copy_global_to_shared(ring.index((k + AHEAD) % STAGES),
                                       x_ptr + nrow.to(gl.int64) * stride_x + nstart + cols,
                                       mask=(nstart + lead < N) & (nxt < total))
        cp.commit_group()
        cp.wait_group(AHEAD)  # this step's chunk has landed (the AHEAD younger ones may not)
        # 1. This step's chunk: (max, sum of exp), published as one word by one thread.
        if item < total:
            x = ring.index(k % STAGES).load(blk).to(gl.float32)
            if not EVEN:  # (masked copies wrote zeros)
                x = gl.where((item - (item // S) * S) * SEG + lead < N, x, float("-inf"))
            m, s = _chunk_stats(x, FOLD)
            if GROUP > 1:
                if k % GROUP == 0:
                    m_seg = gl.full([], float("-inf"), gl.float32)
                    s_seg = gl.zeros([], gl.float32)
                m, s = _merge(m_seg, s_seg, m, s)
                m_seg = m
                s_seg = s
            if k % GROUP == GROUP - 1:
                _publish(words + item // GROUP, m, s, tag)
        # 2. The item of step k - LAG: its row's partials, combined; its chunk, written. A
        #    published word is final, so warps that all saw every word hold the same words.
        if k >= LAG:
            p, ready = _wait_for_words(p, pptr, tag, abort, WAIT_NS)
            if ready != 0:
                m_row, s_row = _stats_of_words(p, pidx < SG)
                dstart = (done - drow * S) * SEG
                x = ring.index((k - LAG) % STAGES).load(blk).to(gl.float32)
                if FOLD:
                    y = gl.exp2(x * LOG2E - (m_row * LOG2E + gl.log2(s_row)))
                else:
                    y = gl.exp2((x - m_row) * LOG2E) * (1.0 / s_row)
                gl.store(out_ptr + drow.to(gl.int64) * N + dstart + cols, y.to(dt),
                         mask=dstart + lead < N)
            else:  # gave up: nobody waits any more; the item is redone after the loop
                gl.atomic_max(abort, 1, sem="relaxed")
                gl.store(marks + done, 1)
                gave_up += 1
    cp.wait_group(0)
    if gave_up > 0:  # the slow way: the row's (max, sum) from the input, then the chunk
        gl.thread_barrier()  # every thread sees the marks (one thread stored each)
        for step in range(0, n_steps):
            item = _item(pid, step, nprog, GROUP)
            if gl.load(marks + item) != 0:
                row = item // S
                x_row = x_ptr + row.to(gl.int64) * stride_x
                m_row, s_row = _stats_from_dram(x_row, N, cols, lead, SEG)
                c0 = (item - row * S) * SEG
                xc = gl.load(x_row + c0 + cols, mask=c0 + lead < N,
                             other=float("-inf")).to(gl.float32)
                y = gl.exp2((xc - m_row) * LOG2E) * (1.0 / s_row)
                gl.store(out_ptr + row.to(gl.int64) * N + c0 + cols, y.to(dt), mask=c0 + lead < N)
                gl.store(marks + item, 0)
    _end_of_launch(ws_ptr, nprog)
# --8<-- [end:ring_kernel]


# --8<-- [start:whole_row_kernel]
@gluon.jit
def whole_row_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, WAIT_NS,
                     VEC: gl.constexpr, R: gl.constexpr, NCH: gl.constexpr,
                     SPLIT: gl.constexpr, EVEN: gl.constexpr, FOLD: gl.constexpr):
    # A row is held whole in shared memory: by one program (SPLIT = 1) or by a group of SPLIT
    # programs, each holding one slice of it (programs g * SPLIT + j, j = 0 .. SPLIT - 1, take
    # rows g, g + groups, ...). A slice is NCH chunks of R 16-byte copies per thread ([R, T, VEC]
    # blocks, as in ring_kernel). For each row: (A) as each chunk lands, each thread folds its
    # values into its running (max, sum), and one reduction across the program gives the
    # slice's; (B) each chunk is written out, and the next row's chunk is copied into its
    # buffer. Each value is read from DRAM once. SPLIT > 1: the group's programs exchange their
    # slices' (max, sum) through the workspace, as ring_kernel's partials, and a program holds
    # two rows' slices: (B) of a row comes after (A) of the next, so the wait for the group
    # overlaps that row's copies. All programs must be resident at once (the host sizes the
    # grid so); a program that waits longer than WAIT_NS for its group reads the whole row from
    # DRAM for its (max, sum) instead, and raises the abort flag, which ends every other wait.
    # SPLIT <= 32: a warp's lanes read a row's words. EVEN: every slice is full. FOLD: as in
    # ring_kernel.
    N = N // VEC * VEC
    stride_x = stride_x // VEC * VEC
    W: gl.constexpr = gl.num_warps()
    T: gl.constexpr = 32 * W
    SEG: gl.constexpr = R * T * VEC
    HELD: gl.constexpr = 1 if SPLIT == 1 else 2  # rows held at once
    LAG: gl.constexpr = HELD - 1                 # (B) of row k comes after (A) of row k + LAG
    blk: gl.constexpr = gl.BlockedLayout([1, 1, VEC], [1, 32, 1], [1, W, 1], [2, 1, 0])
    per_thread: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(2, blk))
    every_warp: gl.constexpr = gl.BlockedLayout([1], [32], [W], [0])
    bufs = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [HELD * NCH, R, T, VEC],
                                     gl.SwizzledSharedLayout(1, 1, 1, order=[2, 1, 0]))
    pid = gl.program_id(0)
    groups = gl.num_programs(0) // SPLIT
    first = pid // SPLIT
    n_rows = gl.cdiv(M - first, groups)  # this program's rows: first, first + groups, ...
    start = (pid % SPLIT) * (NCH * SEG)  # its slice of each row
    dt = x_ptr.dtype.element_ty
    r_ = gl.arange(0, R, layout=gl.SliceLayout(1, gl.SliceLayout(2, blk)))
    t_ = gl.arange(0, T, layout=per_thread)
    v_ = gl.arange(0, VEC, layout=gl.SliceLayout(0, gl.SliceLayout(1, blk)))
    lead = (gl.expand_dims(gl.expand_dims(r_, 1), 2) * (T * VEC)     # [R, T, 1]: the first
            + gl.expand_dims(gl.expand_dims(t_, 0), 2) * VEC)        # value of each copy
    cols = lead + gl.expand_dims(gl.expand_dims(v_, 0), 1)
    pidx = gl.arange(0, 32, layout=every_warp)  # each warp reads all of a row's words
    # ws_ptr: int64 [launches so far, programs finished, abort flag, SPLIT words per row], as
    # ring_kernel's (a word carries its launch's parity; never zeroed between launches).
    tag = ((gl.load(ws_ptr) + 1) & 1) << 31
    abort = ws_ptr + 2
    words = ws_ptr + 3
    for h in gl.static_range(HELD):
        row = first + h * groups
        for c in gl.static_range(NCH):
            cp.async_copy_global_to_shared(bufs.index(h * NCH + c),
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
                b = gl.expand_dims(gl.expand_dims(m_safe, 0), 2)
                if FOLD:
                    e = gl.exp2(x * LOG2E - b * LOG2E)
                else:
                    e = gl.exp2((x - b) * LOG2E)
                s_t = s_t * gl.exp2((m_t - m_safe) * LOG2E) + gl.sum(gl.sum(e, axis=2), axis=0)
                m_t = m_new
            m_row, s_row = _combine(m_t, s_t)
            if SPLIT > 1:
                _publish(words + row * SPLIT + pid % SPLIT, m_row, s_row, tag)
        if k >= LAG:  # (B) row k - LAG: written out; its buffers take row k - LAG + HELD
            row = first + (k - LAG) * groups
            buf = ((k - LAG) % HELD) * NCH
            if SPLIT > 1:  # the row's (max, sum) from its group's words (or from DRAM)
                pptr = words + row * SPLIT + gl.minimum(pidx, SPLIT - 1)
                p, ready = _wait_for_words(_relaxed_load(pptr), pptr, tag, abort, WAIT_NS)
                if ready != 0:
                    m_row, s_row = _stats_of_words(p, pidx < SPLIT)
                else:
                    gl.atomic_max(abort, 1, sem="relaxed")  # nobody waits any more
                    m_row, s_row = _stats_from_dram(x_ptr + row.to(gl.int64) * stride_x, N,
                                                    cols, lead, SEG)
            nrow = row + HELD * groups
            for c in gl.static_range(NCH):
                x = bufs.index(buf + c).load(blk).to(gl.float32)
                if FOLD:
                    y = gl.exp2(x * LOG2E - (m_row * LOG2E + gl.log2(s_row)))
                else:
                    y = gl.exp2((x - m_row) * LOG2E) * (1.0 / s_row)
                gl.store(out_ptr + row.to(gl.int64) * N + start + c * SEG + cols, y.to(dt),
                         mask=start + c * SEG + lead < N)
                cp.async_copy_global_to_shared(bufs.index(buf + c),
                                               x_ptr + nrow.to(gl.int64) * stride_x + start
                                               + c * SEG + cols,
                                               mask=(start + c * SEG + lead < N) & (nrow < M))
                cp.commit_group()
    cp.wait_group(0)
    _end_of_launch(ws_ptr, gl.num_programs(0))
# --8<-- [end:whole_row_kernel]
