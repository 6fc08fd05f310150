// Solution of labs/starters/my_softmax_v3.cu (lab 02, softmax v3): the row stays in registers,
// loaded and stored 16 bytes at a time. Each thread loads its SLOTS float4 slots once, and max,
// sum and output all come from registers: the row crosses the bus once each way, the least any
// softmax can move. It starts from my_softmax_v2.cu's solution (merge, warp_merge, block_merge),
// which also serves rows too long for the registers.
//
//     python -m phase24 check softmax --file labs/solutions/my_softmax_v3.cu
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1
#define SLOTS 4  // float4 slots a thread holds: rows of up to THREADS * SLOTS * 4 = 4096 values

// What a thread (then a warp, then the block) knows of its values: the largest, and the sum of
// e^(x - max) over them. {-inf, 0} has seen nothing.
struct Partial {
    float max;
    float sum;
};

// Two partials as one: the larger max, and each sum moved to it. A side with max = -inf adds
// nothing (and e^(-inf - -inf) would be NaN). A NaN or +inf in the row reaches the sum as NaN
// (inf - inf), so the whole row comes out NaN, as torch.softmax's does.
__device__ Partial merge(Partial a, Partial b) {
    if (b.max == -CUDART_INF_F) return a;
    if (a.max == -CUDART_INF_F) return b;
    const float m = fmaxf(a.max, b.max);
    return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// The 32 lanes' partials merged in five steps: after the step at offset o, each lane holds the
// merge of 2o lanes' partials, and after o = 1 every lane holds the warp's.
__device__ Partial warp_merge(Partial p) {
    for (int offset = 16; offset > 0; offset /= 2) {
        const Partial other = {__shfl_xor_sync(0xffffffffu, p.max, offset),
                               __shfl_xor_sync(0xffffffffu, p.sum, offset)};
        p = merge(p, other);
    }
    return p;
}

// The block's partial: each warp's, through shared memory, behind one barrier.
__device__ Partial block_merge(Partial p) {
    __shared__ Partial warps[THREADS / 32];
    p = warp_merge(p);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = p;
    __syncthreads();
    Partial all = warps[0];
    for (int w = 1; w < THREADS / 32; ++w) all = merge(all, warps[w]);
    return all;
}

// Rows too long for the registers: v2's two reads of the row.
__device__ void two_reads(const float* xr, float* yr, int N) {
    Partial p = {-CUDART_INF_F, 0.0f};
    for (int j = threadIdx.x; j < N; j += THREADS) p = merge(p, {xr[j], 1.0f});
    p = block_merge(p);
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = expf(xr[j] - p.max) / p.sum;
}

extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    const long long row = blockIdx.x;
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;
    if (N > THREADS * SLOTS * 4) return two_reads(xr, yr, N);
    // 16-byte accesses need every row to start on a 16-byte boundary: x and y aligned, N and
    // the stride multiples of 4. A sliced view or an odd N takes the same path element by element.
    const bool vec = ((unsigned long long)x | (unsigned long long)y) % 16 == 0 && N % 4 == 0 &&
                     x_stride % 4 == 0;
    float v[SLOTS][4];  // slot k holds columns 4 * (k * THREADS + threadIdx.x) .. + 3
#pragma unroll
    for (int k = 0; k < SLOTS; ++k) {
        const int col = 4 * (k * THREADS + threadIdx.x);
        if (vec && col < N) {
            const float4 q = reinterpret_cast<const float4*>(xr + col)[0];
            v[k][0] = q.x, v[k][1] = q.y, v[k][2] = q.z, v[k][3] = q.w;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) v[k][i] = col + i < N ? xr[col + i] : -CUDART_INF_F;
        }
    }
    // The thread's own max, then its sum against it: one merge for the block, not one a value.
    Partial p = {-CUDART_INF_F, 0.0f};
#pragma unroll
    for (int k = 0; k < SLOTS; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) p.max = fmaxf(p.max, v[k][i]);
    // Against 0 where the thread holds only -inf (and padding): its terms are then 0, or NaN
    // for a NaN, which fmaxf skipped. A NaN sum gets a finite max, so that merge keeps it.
    const float ref = p.max == -CUDART_INF_F ? 0.0f : p.max;
#pragma unroll
    for (int k = 0; k < SLOTS; ++k)  // slots past the row hold only padding: skip their exps
        if (4 * (k * THREADS + threadIdx.x) < N)
#pragma unroll
            for (int i = 0; i < 4; ++i) p.sum += expf(v[k][i] - ref);
    if (p.sum != p.sum) p.max = ref;
    p = block_merge(p);
    const float inv = 1.0f / p.sum;
#pragma unroll
    for (int k = 0; k < SLOTS; ++k) {
        const int col = 4 * (k * THREADS + threadIdx.x);
        if (col >= N) break;  // the slots after this one start further right still
        float e[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) e[i] = expf(v[k][i] - p.max) * inv;
        if (vec && col < N) {
            reinterpret_cast<float4*>(yr + col)[0] = make_float4(e[0], e[1], e[2], e[3]);
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (col + i < N) yr[col + i] = e[i];
        }
    }
}
