// v0 (cuda-naive): one thread per row, three passes over the row (max, sum, write).
//
// The correct, slow starting point of lab 01. Each thread walks its own row, so the 32
// threads of a warp read 32 addresses N elements apart: every load is a separate memory
// transaction, and each row is read three times. Prediction: a few percent of the copy
// bandwidth on long rows, and better on short rows, where rows of a warp share cache lines.
// One float32 accumulator summing 262144 terms in order drifts: each addition rounds at the
// running sum's scale, so the error grows with N. The sum is compensated, run by run (run_sum in
// compensated_sum.cuh). Later rungs add in a tree, from short runs per thread; v1 and v2, whose
// threads add N / 256 terms in order, compensate too (v1 with run_sum, v2 with CompensatedSum
// inside its online sum).
// Limit: one thread does a whole row, three times over, with uncoalesced loads: the GPU's
// bandwidth goes mostly unused, and a row's time grows with N on one thread.
#include "compensated_sum.cuh"
#include "export.cuh"
#include "vec16.cuh"

// --8<-- [start:kernel]
template <typename T>
__device__ void naive_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (row >= M) return;
    const T* xr = x + row * x_stride;
    T* yr = y + row * (long long)N;

    float m = -CUDART_INF_F;  // pass 1: the row's maximum, so exp never overflows
    for (int j = 0; j < N; ++j) m = fmaxf(m, to_float(xr[j]));

    // pass 2: the sum of exponentials, in runs of 32 terms, the runs' totals compensated
    const float s = run_sum(0, N, 1, [&](int j) { return expf(to_float(xr[j]) - m); });

    for (int j = 0; j < N; ++j) yr[j] = from_float<T>(expf(to_float(xr[j]) - m) / s);  // pass 3
}
// --8<-- [end:kernel]

// One kernel per dtype, no configuration: softmax_v0_<dtype>.
#define V0_KERNEL(tag, T, ...) SOFTMAX_EXPORT(softmax_v0_##tag, T, , naive_softmax<T>)
SOFTMAX_EVERY_DTYPE(V0_KERNEL)
