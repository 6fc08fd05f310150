// v2 (cuda-v2): warp-shuffle reductions and online softmax: two reads of the row instead of three.
//
// Changed from v1: (1) reductions use __shfl_xor_sync inside each warp, then one shared-memory
// step across the 8 warps (block_max, block_sum in reduce.cuh): 1 barrier per reduction
// instead of 9. (2) Each thread finds the max and the sum of its values in a single pass with
// the online rule: the sum is kept against a reference value and rescaled by e^(old - new) when
// the reference moves up; then the block's max, and the sum of every thread's sum moved to it.
// The row is read twice and written once, for any N and any alignment: this rung is also the
// fallback for rows too long to keep on chip (float32 rows over 512K values on Hopper, over 16K
// elsewhere), so its error must not grow with N: the reference moves only in steps that shrink
// the sum by 4 or more, each thread's sum of N / 256 terms is compensated (as in v0), and
// exp(d) = exp2(d * log2(e)) takes log2(e) in two floats.
// Prediction: 4/3 of v1 on long rows (three row transfers, 2 reads + 1 write, instead of four).
// Limit: the row still crosses the bus twice on the way in.
#include "compensated_sum.cuh"
#include "export.cuh"
#include "fast_exp2.cuh"
#include "reduce.cuh"
#include "vec16.cuh"

constexpr int V2_THREADS = 256;

// e^d as exp2(d * log2(e)), log2(e) = LOG2E + LOG2E_LO: the float constant alone is 1.3e-8
// short, which would scale every exponent by 1 - 1.3e-8.
constexpr float LOG2E_LO = 1.925963033500011e-8f;
__device__ __forceinline__ float exp_of(float d) { return exp2f(fmaf(d, LOG2E, d * LOG2E_LO)); }

// --8<-- [start:online]
// A thread's running partial: `sum` adds e^(x - ref) over its values, `max` is their largest.
// The textbook rule moves ref to every new maximum, rounding once each time it rescales the
// sum; on a row that keeps rising (a position bias, say) every value is a new maximum and the
// error grows with N. Here ref moves only when a value passes it by more than RESCALE_GAP: each
// move divides the sum so far by more than 4, so all the moves' roundings together weigh about
// as much as one. The terms stay below e^RESCALE_GAP = 4.
constexpr float RESCALE_GAP = 1.3862944f;  // ln 4
struct Online {
    float ref = -CUDART_MAX_NORMAL_F;  // finite, so that a -inf value adds e^-inf = 0
    float max = -CUDART_INF_F;
    CompensatedSum sum;
};

__device__ __forceinline__ void online_add(Online& a, float x) {
    a.max = fmaxf(a.max, x);
    if (x > a.ref + RESCALE_GAP) {
        a.sum.scale(exp_of(a.ref - x));
        a.ref = x;
    }
    a.sum.add(exp_of(x - a.ref));  // NaN makes the sum NaN, +inf too (inf - inf), as in torch
}
// --8<-- [end:online]

// --8<-- [start:kernel]
template <typename T>
__device__ void online_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const T* xr = x + row * x_stride;
        T* yr = y + row * (long long)N;
        Online acc;
        for (int j = threadIdx.x; j < N; j += V2_THREADS) online_add(acc, to_float(xr[j]));
        // the row's max, then every thread's sum moved to it: a row of -inf ends in 0 * inf = NaN
        const float m = block_max<V2_THREADS>(acc.max);
        const float inv = 1.f / block_sum<V2_THREADS>(acc.sum.value() * exp_of(acc.ref - m));
        for (int j = threadIdx.x; j < N; j += V2_THREADS)
            yr[j] = from_float<T>(exp_of(to_float(xr[j]) - m) * inv);
    }
}
// --8<-- [end:kernel]

// One kernel per dtype, no configuration: softmax_v2_<dtype>.
#define V2_KERNEL(tag, T, ...) SOFTMAX_EXPORT(softmax_v2_##tag, T, , online_softmax<T>)
SOFTMAX_EVERY_DTYPE(V2_KERNEL)
