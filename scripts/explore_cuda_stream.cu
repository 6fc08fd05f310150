// Exploration (not a rung): v10's kernel with cache hints on its global accesses (HINT as in
// softmax_common.cuh's load_global16), and a plain 16-byte copy with the same hints.
#define V10_NO_KERNELS
#include "softmax_v10_cluster_push.cu"

#define XS_ONE(THREADS, K, S, CLUSTER, HINT, tag, T)                                              \
    extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                     \
        __launch_bounds__(THREADS, v10_per_sm(sizeof(T), S) / THREADS)                             \
            xs_t##THREADS##_k##K##_s##S##_c##CLUSTER##_h##HINT##_##tag(const T* x, T* y,           \
                                                                     long long M, int N,           \
                                                                     long long s) {                \
        push_softmax<T, THREADS, K, S, CLUSTER, HINT>(x, y, M, N, s);                              \
    }
#define XS_TYPES(THREADS, K, S, CLUSTER, HINT) \
    XS_ONE(THREADS, K, S, CLUSTER, HINT, f32, float) XS_ONE(THREADS, K, S, CLUSTER, HINT, bf16, __nv_bfloat16)
#define XS_HINTS(THREADS, K, S, CLUSTER) \
    XS_TYPES(THREADS, K, S, CLUSTER, 1) XS_TYPES(THREADS, K, S, CLUSTER, 2) \
    XS_TYPES(THREADS, K, S, CLUSTER, 3) XS_TYPES(THREADS, K, S, CLUSTER, 4)
#define XS_CLUSTERS(THREADS, K, S) XS_HINTS(THREADS, K, S, 4) XS_HINTS(THREADS, K, S, 8) \
    XS_HINTS(THREADS, K, S, 16)

XS_CLUSTERS(256, 4, 0) XS_CLUSTERS(512, 4, 0) XS_CLUSTERS(512, 4, 4)

#define XC(HINT)                                                                                   \
    extern "C" __global__ void xc_h##HINT(const uint4* x, uint4* y, long long n) {                 \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                \
             i += (long long)gridDim.x * blockDim.x)                                               \
            store_global16<HINT>(y + i, load_global16<HINT>(x + i));                               \
    }
XC(0) XC(1) XC(2) XC(3) XC(4)
