// My CUDA C softmax: a starter file for lab 01 of Phase 24.
//
// Grade it with
//
//     python -m phase24 check softmax --file labs/starters/my_softmax.cu
//
// On a machine with an NVIDIA GPU the checker compiles it for that GPU, runs it on every test
// case and compares it with softmax in float64. Without a GPU it runs it in the lab's CUDA C
// emulator (each CUDA thread a coroutine, every memory access checked: races, reads out of
// bounds, shared memory read before it is written) on the same cases with long rows trimmed, and
// prints what the kernel's loads and stores cost: correctness and counts, no timing. Either way
// it runs the file's code with your rights.
//
// Once yours passes, or if you are stuck, compare with labs/solutions/my_softmax.cu.
//
// The kernel ABI the checker expects (the same one the lab's own kernels follow):
//
// * extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
//                                          long long x_stride);
//   x holds M rows of N floats; row r starts at x + r * x_stride (x_stride >= N: the rows of
//   a sliced view are further apart than N, and need not be 16-byte aligned).
//   y is contiguous: row r starts at y + r * N. Write all M * N outputs.
// * #define THREADS         threads per block             (the checker's default: 256)
// * #define ROWS_PER_BLOCK  rows each block handles        (default: 1)
//   The grid has ceil(M / ROWS_PER_BLOCK) blocks.
// * Optional: softmax_f16 (__half) and softmax_bf16 (__nv_bfloat16) with the same arguments;
//   the checker grades every dtype the file defines.
//
// What counts as right: within the float32 tolerance of the float64 reference, rows summing
// to 1, a row of -inf giving NaN and a NaN anywhere in a row making the whole row NaN, like
// torch.softmax. The checker fills y with NaN (and then with 42) before calling you, so an
// element you forget to write shows up as wrong.
#include <math_constants.h>

#define THREADS 256
#define ROWS_PER_BLOCK 1

// --8<-- [start:starter]
extern "C" __global__ void softmax_f32(const float* x, float* y, long long M, int N,
                                       long long x_stride) {
    long long row = blockIdx.x;  // ROWS_PER_BLOCK = 1: block b owns row b
    if (row >= M) return;
    const float* xr = x + row * x_stride;
    float* yr = y + row * (long long)N;

    // TODO 1: the maximum of the row. Each thread takes columns threadIdx.x,
    //         threadIdx.x + THREADS, ... (consecutive threads read consecutive addresses),
    //         keeps its own maximum, and the block combines the THREADS partial maxima
    //         (a __shared__ array and a tree reduction with __syncthreads(), as in v1).
    float m = -CUDART_INF_F;

    // TODO 2: the sum of expf(xr[j] - m) over the row, combined across the block the same way.
    float s = 1.f;

    // TODO 3: write yr[j] = expf(xr[j] - m) / s for the columns of this thread.
    // As given, the kernel copies the row unchanged: it compiles and runs, and the checker
    // fails it. Replace the line below.
    (void)m;
    (void)s;
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = xr[j];
}
// --8<-- [end:starter]
