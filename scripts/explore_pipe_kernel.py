import triton.language as tl
LOG2E = tl.constexpr(1.4426950408889634)

def pipe_kernel(x_ptr, out_ptr, ws_ptr, M, N, stride_x, S,
                SEG: tl.constexpr, PBLOCK: tl.constexpr, STAGES: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    total = M * S
    cols = tl.arange(0, SEG)
    pidx = tl.arange(0, PBLOCK)
    words = ws_ptr
    marks = ws_ptr + total
    x_prev = tl.zeros([SEG], x_ptr.dtype.element_ty)
    missed = 0
    for k in tl.range(0, tl.cdiv(total - pid, nprog) + 1, num_stages=STAGES):
        item = pid + k * nprog
        row = item // S
        offs = (item - row * S) * SEG + cols
        xk = tl.load(x_ptr + row.to(tl.int64) * stride_x + offs, mask=(offs < N) & (item < total),
                     other=float("-inf"))
        done = item - nprog
        drow = tl.maximum(done, 0) // S
        pptr = words + drow * S + tl.minimum(pidx, S - 1)
        p = tl.load(pptr, volatile=True)
        x = xk.to(tl.float32)
        m = tl.max(x, axis=0)
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        s = tl.sum(tl.exp2((x - m_safe) * LOG2E), axis=0)
        word = ((m.to(tl.int32, bitcast=True).to(tl.int64) << 32)
                | (s.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF))
        tl.store(words + item, word, mask=item < total)
        ok = tl.min((p != 0).to(tl.int32), axis=0) != 0
        pm = tl.where(pidx < S, (p >> 32).to(tl.int32).to(tl.float32, bitcast=True), float("-inf"))
        ps = tl.where(pidx < S, p.to(tl.int32).to(tl.float32, bitcast=True), 0.0)
        m_row = tl.max(pm, axis=0)
        inv = 1.0 / tl.sum(ps * tl.exp2((pm - m_row) * LOG2E), axis=0)
        doffs = (done - drow * S) * SEG + cols
        y = tl.exp2((x_prev.to(tl.float32) - m_row) * LOG2E) * inv
        tl.store(out_ptr + drow.to(tl.int64) * N + doffs, y.to(out_ptr.dtype.element_ty),
                 mask=(doffs < N) & ok & (done >= 0))
        tl.store(marks + done, 1, mask=(~ok) & (done >= 0))
        missed += ((~ok) & (done >= 0)).to(tl.int32)
        x_prev = xk
    tl.store(ws_ptr + 2 * total + pid, missed)
