// v3 (cuda-v3): the row stays in registers, loaded with 16-byte vector accesses: one read, one write.
//
// Changed from v2: each of the 256 threads loads its K slots of 16 bytes (4 floats or 8
// halves) once, keeps them in registers, and computes max, exponentials, sum and output from
// there: the row crosses the memory bus once each way, the minimum. 16-byte loads cut the
// number of load instructions by 4 (fp32) or 8 (16-bit types). K is a compile-time constant
// (1..16), picked by the launcher from N, so the register array is indexed only by constants.
// Rows longer than 256 * 16 * V elements (16384 fp32, 32768 16-bit) do not fit and go to v2.
// Unaligned rows (odd N, sliced views) take the same path with element-wise loads.
// Prediction: near the copy ceiling for mid-sized rows; short rows still leave threads idle.
// Limit: 256 threads a row whatever N (a 128-value row keeps 224 of them idle), two reductions
// with barriers each, and rows beyond one block's registers go to v2.
#include "export.cuh"
#include "fast_exp2.cuh"
#include "reduce.cuh"
#include "slots.cuh"
#include "vec16.cuh"

constexpr int V3_THREADS = 256;

// --8<-- [start:kernel]
template <typename T, int K>
__device__ void registers_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    constexpr int V = Vec16<T>::size;
    bool vec = rows_aligned16(x, y, N, x_stride);
    float v[K][V];
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        load_slots<T, K, V3_THREADS>(x + row * x_stride, 0, N, threadIdx.x, vec, v);
        const float m = block_max<V3_THREADS>(held_max(v));
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
            for (int i = 0; i < V; ++i) {
                v[k][i] = exp2f((v[k][i] - m) * LOG2E);
                s += v[k][i];
            }
        scale(v, 1.f / block_sum<V3_THREADS>(s));
        store_slots<T, K, V3_THREADS>(y + row * (long long)N, 0, N, threadIdx.x, vec, v);
    }
}
// --8<-- [end:kernel]

#define V3_KERNEL(tag, T, K)                                                                       \
    SOFTMAX_EXPORT(softmax_v3_k##K##_##tag, T, __launch_bounds__(V3_THREADS, 1),                   \
                   registers_softmax<T, K>)
#define V3(K) SOFTMAX_EVERY_DTYPE(V3_KERNEL, K)  // softmax_v3_k<K>_<dtype>

// --8<-- [start:configs]
// K, the slots of 16 bytes a thread holds: the launcher takes the smallest that holds the row
// (configs.py lists the same).
V3(1) V3(2) V3(4) V3(8) V3(16)
// --8<-- [end:configs]
