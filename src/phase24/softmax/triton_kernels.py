"""The Triton kernels behind ``triton-naive`` and ``triton`` (softmax over the last dim).

The functions below are plain Python functions; ``kernel(name)`` wraps one with ``triton.jit``
when it is first launched. ``triton.jit`` decides at wrapping time whether a kernel is compiled for
the GPU or run by the interpreter (``TRITON_INTERPRET=1``), so wrapping late, and once per mode,
lets one process use both (the CPU tests switch the interpreter on and off around themselves).

Every kernel reads ``x`` through a row stride (rows may start anywhere) and writes a contiguous
``out`` of the same dtype. All arithmetic is float32. ``exp(v) = exp2(v * log2(e))``: the
subtraction of the row maximum happens first, in float32, so that large magnitudes keep their
precision; only the difference is scaled by log2(e).

NaN and infinity follow torch.softmax: a row of -inf gives NaN (max = -inf, -inf - -inf = NaN),
a NaN anywhere in a row makes the sum NaN and so the whole row NaN, a +inf makes the row NaN.
"""


import triton.language as tl

from phase24.softmax.args import triton_interpreter_active

LOG2E = tl.constexpr(1.4426950408889634)


# --8<-- [start:naive_kernel]
def naive_kernel(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr):
    # One program per row; the whole row sits in one block (BLOCK_N >= N).
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp2((x - m) * LOG2E)  # masked lanes: exp2(-inf) = 0
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * N + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
# --8<-- [end:naive_kernel]


# --8<-- [start:rows_kernel]
def rows_kernel(x_ptr, out_ptr, M, N, stride_x,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr):
    # A tile is BLOCK_M whole rows (BLOCK_N >= N). Short rows: many rows per tile, so a program
    # moves enough bytes. Medium rows: BLOCK_M = 1. The grid may be smaller than the number of
    # tiles (persistent programs): each program strides over tiles, and with NUM_STAGES > 1 the
    # compiler prefetches the next tile's loads while the current one is reduced.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    n_tiles = tl.cdiv(M, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    for tile in tl.range(pid, n_tiles, nprog, num_stages=NUM_STAGES):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        rows64 = rows.to(tl.int64)
        mask = (rows < M)[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows64[:, None] * stride_x + cols[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        m = tl.max(x, axis=1)
        e = tl.exp2((x - m[:, None]) * LOG2E)
        inv = 1.0 / tl.sum(e, axis=1)
        y = e * inv[:, None]
        tl.store(out_ptr + rows64[:, None] * N + cols[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=mask)
# --8<-- [end:rows_kernel]


# --8<-- [start:long_row_kernel]
def split_kernel(x_ptr, out_ptr, part_ptr, sync_ptr, M, N, stride_x, S, CPP,
                 SEG: tl.constexpr, PBLOCK: tl.constexpr, PHASE: tl.constexpr,
                 WAIT_NS: tl.constexpr, SPIN_LIMIT: tl.constexpr, GPU: tl.constexpr):
    # A row is split over S programs; program `seg` owns CPP chunks of SEG elements. Each program
    # computes (max, sum of exp) of its part, publishes it to part_ptr, and every program of the
    # row then combines the S partials and writes its own part.
    #   PHASE 0 (fused): one kernel. The first chunk stays in registers while the program waits
    #     for the other S - 1 partials of its row, so with CPP = 1 the input is read once.
    #     Programs take tickets from a counter in order, so every program waits only on tickets
    #     already taken or still to be taken by programs that can start; with S <= number of
    #     resident programs this cannot deadlock. The wait is bounded: a timeout writes NaN.
    #   PHASE 1 then PHASE 2: two launches, stats then output (re-reads the input). Used by the
    #     interpreter, which runs programs one after another and so cannot wait on a peer.
    # sync_ptr holds [ticket counter, abort flag, one arrival counter per row].
    total = M * S
    if PHASE == 0:
        t = tl.atomic_add(sync_ptr, 1, sem="relaxed")
    else:
        t = tl.program_id(0)
    row = t // S
    seg = t - row * S
    row64 = row.to(tl.int64)
    x_row = x_ptr + row64 * stride_x
    o_row = out_ptr + row64 * N
    # int32 offsets inside the row (the wrapper keeps N + CPP*SEG < 2^31): int64 ones per element
    # cost ~64 more registers, and the chunk must stay in registers across the wait.
    offs = seg * (CPP * SEG) + tl.arange(0, SEG)

    if PHASE != 2:
        x0 = tl.load(x_row + offs, mask=offs < N, other=float("-inf")).to(tl.float32)
        m = tl.max(x0, axis=0)
        # A chunk of only -inf publishes (max=-inf, sum=0) rather than NaN, so that it adds
        # nothing to a row that has finite values elsewhere.
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        s = tl.sum(tl.exp2((x0 - m_safe) * LOG2E), axis=0)
        for c in range(1, CPP):  # online update over the program's further chunks
            offs_c = offs + c * SEG
            xc = tl.load(x_row + offs_c, mask=offs_c < N, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(xc, axis=0))
            m_new_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            s = s * tl.exp2((m - m_new_safe) * LOG2E) \
                + tl.sum(tl.exp2((xc - m_new_safe) * LOG2E), axis=0)
            m = m_new
        tl.store(part_ptr + t, m)
        tl.store(part_ptr + total + t, s)

    if PHASE == 0:
        # Publish: the barrier orders the partial's stores before the release increment.
        abort = sync_ptr + 1
        arrived = sync_ptr + 2 + row
        tl.debug_barrier()
        tl.atomic_add(arrived, 1, sem="release")
        # Wait until S programs have arrived. On the GPU every thread polls for itself with an
        # acquire load written in PTX (ld.global.acquire.gpu): no barrier and no shared memory
        # sit in the loop, and each thread's own acquire orders its reads of the partials after
        # the peers' releases. (The first version polled with a scalar tl.atomic_add, which
        # Triton runs on one thread and broadcasts through shared memory with two barriers per
        # poll; it left NaN behind on the H200 for a reason its PTX does not show, see
        # scripts/explore_triton.py.) Polls are ~100 ns apart (nanosleep) so that waiting
        # programs do not crowd the L2. The wait ends after WAIT_NS of %globaltimer, or at once
        # when another program has given up (abort flag): a bug costs ~WAIT_NS, never a hang.
        # The interpreter has no PTX: it polls with an atomic, at most SPIN_LIMIT times.
        seen = 0
        stop = 0
        if GPU:
            t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [],
                                           dtype=tl.int64, is_pure=False, pack=1)
            now = t0
            while (seen < S) & (stop == 0) & (now - t0 < WAIT_NS):
                seen, stop, now = tl.inline_asm_elementwise(
                    "nanosleep.u32 100;\n\t"
                    "ld.global.acquire.gpu.b32 $0, [$3];\n\t"
                    "ld.global.relaxed.gpu.b32 $1, [$4];\n\t"
                    "mov.u64 $2, %globaltimer;",
                    "=r,=r,=l,l,l", [arrived, abort], dtype=(tl.int32, tl.int32, tl.int64),
                    is_pure=False, pack=1)
        else:
            spins = 0
            while (seen < S) & (spins < SPIN_LIMIT):
                seen = tl.atomic_add(arrived, 0, sem="acquire")
                spins += 1
        # Threads may disagree only if the deadline struck between their polls: take the
        # verdict of the whole program (the least count any thread saw).
        seen = tl.min(seen + tl.zeros_like(offs), axis=0)
        ok = seen >= S
        tl.atomic_max(abort, 1, mask=seen < S, sem="relaxed")  # timed out: others, stop waiting

    if PHASE != 1:
        # Combine the row's partials: M = max m_i, S = sum s_i * exp(m_i - M). Loads bypass L1
        # (.cg) so that no stale line from before the other programs' stores is read.
        pbase = part_ptr + row * S
        pidx = tl.arange(0, PBLOCK)
        pm = tl.load(pbase + pidx, mask=pidx < S, other=float("-inf"), cache_modifier=".cg")
        m_row = tl.max(pm, axis=0)
        for p in range(PBLOCK, S, PBLOCK):
            pm = tl.load(pbase + p + pidx, mask=p + pidx < S, other=float("-inf"),
                         cache_modifier=".cg")
            m_row = tl.maximum(m_row, tl.max(pm, axis=0))
        pm = tl.load(pbase + pidx, mask=pidx < S, other=float("-inf"), cache_modifier=".cg")
        ps = tl.load(pbase + total + pidx, mask=pidx < S, other=0.0, cache_modifier=".cg")
        s_row = tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
        for p in range(PBLOCK, S, PBLOCK):
            pmask = p + pidx < S
            pm = tl.load(pbase + p + pidx, mask=pmask, other=float("-inf"), cache_modifier=".cg")
            ps = tl.load(pbase + total + p + pidx, mask=pmask, other=0.0, cache_modifier=".cg")
            s_row += tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
        inv = 1.0 / s_row
        if PHASE == 0:
            inv = tl.where(ok, inv, float("nan"))
        else:
            x0 = tl.load(x_row + offs, mask=offs < N, other=float("-inf")).to(tl.float32)
        y0 = tl.exp2((x0 - m_row) * LOG2E) * inv
        tl.store(o_row + offs, y0.to(out_ptr.dtype.element_ty), mask=offs < N)
        for c in range(1, CPP):  # further chunks are read again (from L2 when recent)
            offs_c = offs + c * SEG
            xc = tl.load(x_row + offs_c, mask=offs_c < N, other=float("-inf")).to(tl.float32)
            yc = tl.exp2((xc - m_row) * LOG2E) * inv
            tl.store(o_row + offs_c, yc.to(out_ptr.dtype.element_ty), mask=offs_c < N)
# --8<-- [end:long_row_kernel]

# --8<-- [start:looped_kernel]
def looped_kernel(x_ptr, out_ptr, M, N, stride_x,
                  SEG: tl.constexpr, NUM_STAGES: tl.constexpr, HINTS: tl.constexpr):
    # One program per row (persistent: it strides over rows), two passes over the row in chunks
    # of SEG values. Pass 1: online max and per-lane sums of exp (one reduction per chunk, for
    # the max; the sums are reduced once at the end). Pass 2: read the row again and write.
    # The host keeps (programs in flight) x (row bytes) small enough that the second read can
    # hit the L2; with HINTS, pass-1 loads ask the L2 to keep the lines (evict_last), pass-2
    # loads and the stores mark theirs as streaming (evict_first, .cs). No program waits on
    # another, and there is one launch.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, SEG)
    for row in range(pid, M, nprog):
        row64 = row + tl.zeros([], tl.int64)  # (the interpreter's loop index is a Python int)
        x_row = x_ptr + row64 * stride_x
        o_row = out_ptr + row64 * N
        m = tl.full([], float("-inf"), tl.float32)
        s = tl.zeros([SEG], tl.float32)
        for start in tl.range(0, N, SEG, num_stages=NUM_STAGES):
            offs = start + cols
            xc = tl.load(x_row + offs, mask=offs < N, other=float("-inf"),
                         eviction_policy="evict_last" if HINTS else "").to(tl.float32)
            m_new = tl.maximum(m, tl.max(xc, axis=0))
            # While every value so far is -inf, scale by exp2(x - 0) = 0: the sums stay 0.
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            s = s * tl.exp2((m - m_safe) * LOG2E) + tl.exp2((xc - m_safe) * LOG2E)
            m = m_new
        inv = 1.0 / tl.sum(s, axis=0)
        for start in tl.range(0, N, SEG, num_stages=NUM_STAGES):
            offs = start + cols
            xc = tl.load(x_row + offs, mask=offs < N, other=float("-inf"),
                         eviction_policy="evict_first" if HINTS else "")
            y = (tl.exp2((xc.to(tl.float32) - m) * LOG2E) * inv).to(out_ptr.dtype.element_ty)
            tl.store(o_row + offs, y, mask=offs < N, cache_modifier=".cs" if HINTS else "")
# --8<-- [end:looped_kernel]

# --8<-- [start:lagged_kernel]
def lagged_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S, WAIT_NS,
                  SEG: tl.constexpr, PAIRS: tl.constexpr, NEG_PAIR: tl.constexpr,
                  PBLOCK: tl.constexpr, GPU: tl.constexpr, SPIN_LIMIT: tl.constexpr):
    # Long rows in one launch, each value read once and kept in registers until it is written.
    # A row is cut into S chunks of SEG values; item i is chunk i % S of row i // S, and program
    # p takes items p, p + P, p + 2P, ... (P programs, all resident at once: the host sizes the
    # grid so). At step k a program reduces the chunk of its k-th item to (max, sum of exp) and
    # publishes it, starts loading its next chunk, and then finishes the item of step k - 1: it
    # reads that row's S partials, published by the row's other programs about a step ago, and
    # writes the chunk it kept. A partial is one 64-bit word, (max, sum) bit for bit, written and
    # read with single atomic accesses; the word 0 (never a partial) means "not yet": no fence,
    # no counter. Three chunks live in registers (the one kept, the one reduced, the one
    # loading). A chunk is kept as its exponentials, so part 2 only rescales them. With PAIRS a
    # 16-bit chunk is loaded and stored as 32-bit words of two values (N and the row stride
    # even), so the chunk loading takes one register per two values, and it is kept as two
    # tensors of exponentials (even and odd values), packed back into words by one instruction.
    # A wait that lasts WAIT_NS (a peer that never started, e.g. the GPU was shared) raises the
    # abort flag, so that nobody waits any more, and marks the item; after its loop the program
    # redoes its marked items from the input: slower, never wrong.
    # ws_ptr: int64 [abort flag, one partial per item, one mark per item], zeroed before a launch.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    total = M * S
    dt = x_ptr.dtype.element_ty
    if PAIRS:  # the chunk as SEG // 2 words of two values
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
    pidx = tl.arange(0, PBLOCK)
    words = ws_ptr + 1
    marks = ws_ptr + 1 + total
    row = pid // S
    offs = (pid - row * S) * seg_u + units
    x_next = tl.load(xs + row.to(tl.int64) * stride_u + offs, mask=(offs < n_u) & (pid < total),
                     other=pad)
    # The chunk of step k - 1, as exp(x - kept_max): with PAIRS, the even values' and the odd
    # values' in two tensors.
    kept = tl.zeros_like(units).to(tl.float32)
    if PAIRS:
        kept_hi = tl.zeros_like(units).to(tl.float32)
    kept_max = tl.zeros([], tl.float32)
    gave_up = 0
    for k in range(0, tl.cdiv(total - pid, nprog) + 1):
        item = pid + k * nprog
        # The partials of the row finished in part 2 are read now, to arrive during part 1.
        done = item - nprog
        drow = tl.maximum(done, 0) // S
        pptr = words + drow * S + tl.minimum(pidx, S - 1)  # lanes >= S re-read a real word
        if GPU:
            p = tl.inline_asm_elementwise("ld.relaxed.gpu.global.b64 $0, [$1];", "=l,l",
                                          [pptr], dtype=tl.int64, is_pure=False, pack=1)
        else:
            p = tl.load(pptr)
        # 1. This step's item: the (max, sum of exp) of its chunk, published. A chunk of only
        #    -inf publishes (-inf, 0), which adds nothing to a row with finite values elsewhere.
        if PAIRS:
            lo = x_next.to(tl.int16).to(dt, bitcast=True).to(tl.float32)
            hi = (x_next >> 16).to(tl.int16).to(dt, bitcast=True).to(tl.float32)
            m = tl.max(tl.maximum(lo, hi), axis=0)
            m_safe = tl.where(m == float("-inf"), 0.0, m)
            keep = tl.exp2((lo - m_safe) * LOG2E)
            keep_hi = tl.exp2((hi - m_safe) * LOG2E)
            s = tl.sum(keep + keep_hi, axis=0)
        else:
            x = x_next.to(tl.float32)
            m = tl.max(x, axis=0)
            m_safe = tl.where(m == float("-inf"), 0.0, m)
            keep = tl.exp2((x - m_safe) * LOG2E)
            s = tl.sum(keep, axis=0)
        word = ((m.to(tl.int32, bitcast=True).to(tl.int64) << 32)
                | (s.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF))
        if item < total:
            if GPU:  # one thread stores the word
                tl.inline_asm_elementwise(
                    "{ .reg .pred p; .reg .u32 t; mov.u32 t, %tid.x; setp.eq.u32 p, t, 0;\n\t"
                    "@p st.relaxed.gpu.global.b64 [$1], $2; mov.u32 $0, 0; }",
                    "=r,l,l", [words + item, word], dtype=tl.int32, is_pure=False, pack=1)
            else:
                tl.store(words + item, word)
        # The next step's chunk starts loading now (it is in flight during part 2).
        nxt = item + nprog
        nrow = nxt // S
        noffs = (nxt - nrow * S) * seg_u + units
        x_next = tl.load(xs + nrow.to(tl.int64) * stride_u + noffs,
                         mask=(noffs < n_u) & (nxt < total), other=pad)
        # 2. The item of step k - 1: its row's partials, combined; its chunk, written.
        if done >= 0:
            # Every thread reads the words for itself, and a reduction over fewer lanes than
            # threads happens in each warp apart: warps that read a moment apart could disagree
            # and go different ways. The verdicts (all published? stop waiting?) are therefore
            # reduced once more over a tensor that spans every warp: one for the whole program.
            ready = tl.min(tl.min((p != 0).to(tl.int32), axis=0) + tl.zeros_like(units), axis=0)
            if ready == 0:  # wait for the peers
                stop = 0
                if GPU:
                    t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [],
                                                   dtype=tl.int64, is_pure=False, pack=1)
                    while (ready == 0) & (stop == 0):
                        p = tl.inline_asm_elementwise(
                            "nanosleep.u32 100;\n\tld.relaxed.gpu.global.b64 $0, [$1];",
                            "=l,l", [pptr], dtype=tl.int64, is_pure=False, pack=1)
                        ready = tl.min(tl.min((p != 0).to(tl.int32), axis=0)
                                       + tl.zeros_like(units), axis=0)
                        now = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [],
                                                        dtype=tl.int64, is_pure=False, pack=1)
                        late = (tl.load(ws_ptr, volatile=True) != 0) | (now - t0 > WAIT_NS)
                        stop = tl.max(late.to(tl.int32) + tl.zeros_like(units), axis=0)
                else:
                    spins = 0
                    while (ready == 0) & (stop == 0):
                        p = tl.load(pptr)
                        ready = tl.min((p != 0).to(tl.int32), axis=0)
                        spins += 1
                        stop = (tl.load(ws_ptr) != 0) | (spins >= SPIN_LIMIT)
            if ready != 0:
                pm = tl.where(pidx < S, (p >> 32).to(tl.int32).to(tl.float32, bitcast=True),
                              float("-inf"))
                ps = tl.where(pidx < S, p.to(tl.int32).to(tl.float32, bitcast=True), 0.0)
                m_row = tl.max(pm, axis=0)
                inv = 1.0 / tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
                doffs = (done - drow * S) * seg_u + units
                scale = tl.exp2((kept_max - m_row) * LOG2E) * inv
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
            else:  # gave up: nobody waits any more; the item is redone after the loop
                tl.atomic_max(ws_ptr, 1, sem="relaxed")
                tl.store(marks + done, 1)
                gave_up += 1
        kept = keep
        if PAIRS:
            kept_hi = keep_hi
        kept_max = m_safe
    if gave_up > 0:  # the slow way, value by value: the row's (max, sum), then the chunk
        # One thread stored each mark; the barrier makes the marks visible to every thread, so
        # that all warps agree on which items to redo (they reduce together).
        tl.debug_barrier()
        cols = tl.arange(0, SEG)
        for item in range(pid, total, nprog):
            if tl.load(marks + item) != 0:
                row = item // S
                x_row = x_ptr + row.to(tl.int64) * stride_x
                m_row = tl.full([], float("-inf"), tl.float32)
                s_row = tl.zeros([], tl.float32)
                for c in range(0, N, SEG):
                    xc = tl.load(x_row + c + cols, mask=c + cols < N,
                                 other=float("-inf")).to(tl.float32)
                    m_new = tl.maximum(m_row, tl.max(xc, axis=0))
                    m_new_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
                    s_row = s_row * tl.exp2((m_row - m_new_safe) * LOG2E) \
                        + tl.sum(tl.exp2((xc - m_new_safe) * LOG2E), axis=0)
                    m_row = m_new
                c_offs = (item - row * S) * SEG + cols
                xc = tl.load(x_row + c_offs, mask=c_offs < N, other=float("-inf")).to(tl.float32)
                y = tl.exp2((xc - m_row) * LOG2E) * (1.0 / s_row)
                tl.store(out_ptr + row.to(tl.int64) * N + c_offs, y.to(dt), mask=c_offs < N)
# --8<-- [end:lagged_kernel]


def install_interpreter_numpy_fix() -> None:
    """Let Triton 3.6's interpreter use runtime ints as loop bounds under NumPy >= 2.4.

    The interpreter holds every scalar as a 1-element array and converts it with ``int(array)``,
    which NumPy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars"), so
    ``for i in range(n)`` with a kernel argument ``n`` fails there. This wraps the interpreter's
    patching of ``tl.tensor`` so ``__index__`` reads the single element instead. Idempotent.
    """
    import triton.runtime.interpreter as interp

    if getattr(interp._patch_lang_tensor, "_phase24_fix", False):
        return
    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._phase24_fix = True
    interp._patch_lang_tensor = patched


def _check_triton_mode(interp: bool) -> None:
    """Triton fixes interpreter or compiler when it is imported; refuse a mismatch clearly."""
    from triton.runtime.interpreter import InterpretedFunction

    imported_interpreted = isinstance(tl.standard.max, InterpretedFunction)
    if interp and not imported_interpreted:
        raise RuntimeError(
            "TRITON_INTERPRET=1 was set after triton had been imported without it; Triton's "
            "interpreter needs the variable set before the first `import triton` (set it in the "
            "environment, or at the top of the program)")
    if not interp and imported_interpreted:
        raise RuntimeError(
            "triton was imported with TRITON_INTERPRET=1 and the variable is now unset; Triton "
            "cannot compile for the GPU in this process")


_RAW = {"naive": naive_kernel, "rows": rows_kernel, "split": split_kernel,
        "looped": looped_kernel, "lagged": lagged_kernel}
_WRAPPED: dict = {}


def kernel(name: str):
    """The named kernel wrapped for the current mode (GPU compile or interpreter)."""
    interp = triton_interpreter_active()
    fn = _WRAPPED.get((name, interp))
    if fn is None:
        _check_triton_mode(interp)
        if interp:
            from triton.runtime.interpreter import InterpretedFunction
            install_interpreter_numpy_fix()
            fn = InterpretedFunction(_RAW[name])
        else:
            from triton.runtime.jit import JITFunction
            fn = JITFunction(_RAW[name])
        _WRAPPED[(name, interp)] = fn
    return fn
