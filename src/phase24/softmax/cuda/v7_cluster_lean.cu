// v7 (cuda-v7, Hopper only): v5's cluster with v6's lean reductions, values kept in their
// loaded form, two or more blocks per SM, clusters of up to 16 blocks.
//
// Changed from v5: a 1 MB row on a cluster of 8 meant 8 blocks of 1024 threads x 32 floats,
// one block per SM; while it waited at the cluster barrier its SM moved no bytes (v5: 85-87% of
// copy on fp32 rows of 128K-256K, 59-65% on bf16 rows of 32K-256K). (1) A thread keeps its slots
// as the raw 16 bytes it loaded (load_raw, below): K = 4 slots are 16 registers,
// so 2048 threads (two or more blocks, each at its own stage) share an SM and one block's wait
// overlaps another's loads and stores; and a bfloat16 takes half a register, so an SM holds as
// many bytes of a bf16 row as of an fp32 one. The exponentials are computed twice (for the
// sum, then for the output) instead of being kept. (2) v6's reductions: max, exponentials,
// sum. (3) Clusters of 1 to 16 blocks; 16 is a "non-portable" size the launcher must allow on
// the kernel first.
// Prediction: long rows at the copy ceiling like v6's medium rows, bf16 as well as fp32.
// Outcome (each shape's tuned configuration): bf16 rows of 32K-256K rose
// from v5's 59-65% to 79-88% of copy, fp32 32K-64K to 91-92%; the longest fp32 rows stayed
// with v5 (85-87%). Short rows waste most of a block here. v9 took over the long rows.
#if __INCLUDE_LEVEL__ > 0  // included by a later rung: once is enough
#pragma once
#endif
#include "softmax_v5_cluster.cu"  // v5's cluster per row (cluster_columns, arrive and wait)
#include "softmax_v6_lean.cu"     // v6's lean reductions
// Measured (H200, results/h200/softmax.json, copy 4273 GB/s),
// bulk sweep N = 128..262144 (shapes beyond a rung's reach run v2): fp32 58-3724 GB/s (median 2259); bf16 18-3507 GB/s (median 904).
// Rows of 32768 to 262144, % of copy: fp32 72-84%; bf16 70-82%.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "softmax_v7_cluster_lean.cu uses thread-block clusters: build it for sm_90a"
#endif

// --8<-- [start:raw]
// Slots kept as they were loaded: 16 raw bytes, V values of T, converted to float where used.
// A register then holds two 16-bit values instead of one float, so an SM keeps twice as many
// bfloat16 values on chip; the price is converting (and exponentiating) twice.
template <typename T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return -CUDART_INF_F; }
template <> __device__ __forceinline__ __half neg_inf<__half>() { return __ushort_as_half(0xfc00); }
template <> __device__ __forceinline__ __nv_bfloat16 neg_inf<__nv_bfloat16>() {
    return __ushort_as_bfloat16(0xff80);
}

// A slot is four 32-bit words of W = 4 / sizeof(T) values each (1 float, or 2 halves or
// bfloat16s); the helpers below work one word at a time, so that only two floats exist at
// once besides the raw slots. The conversions are `asm volatile` on purpose: otherwise the
// compiler sees the same conversion in the max, the sum and the output passes, keeps the
// floats of the first pass alive for the others, and the registers saved are lost again.
template <typename T> constexpr int per_word = 4 / sizeof(T);

__device__ __forceinline__ uint32_t word(const uint4& r, int j) {
    return j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
}

// ALT picks a second, different instruction sequence for the same bfloat16 conversion: ptxas
// merges identical instructions on the same register however they were written, and would
// keep the first pass's floats alive for the second.
template <typename T, bool ALT = false>
__device__ __forceinline__ void unpack_word(uint32_t w, float (&out)[per_word<T>]) {
    if constexpr (sizeof(T) == 4) {
        out[0] = __uint_as_float(w);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16> && !ALT) {  // the top half of a float
        uint32_t a, b;
        asm volatile("shl.b32 %0, %1, 16;" : "=r"(a) : "r"(w));
        asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(b) : "r"(w));
        out[0] = __uint_as_float(a), out[1] = __uint_as_float(b);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        asm volatile("{.reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.bf16 %0, l;\n cvt.f32.bf16 %1, h;}"
                     : "=f"(out[0]), "=f"(out[1]) : "r"(w));
    } else {
        asm volatile("{.reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;}"
                     : "=f"(out[0]), "=f"(out[1]) : "r"(w));
    }
}

template <typename T>
__device__ __forceinline__ uint32_t pack_word(const float (&in)[per_word<T>]) {
    if constexpr (sizeof(T) == 4) return __float_as_uint(in[0]);
    else return pack2(in[0], in[1], (T*)nullptr);
}

__device__ __forceinline__ uint32_t bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ uint32_t bits(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint32_t bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
template <typename T> __device__ __forceinline__ T from_bits(uint32_t b);
template <> __device__ __forceinline__ float from_bits<float>(uint32_t b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ __half from_bits<__half>(uint32_t b) {
    return __ushort_as_half((unsigned short)b);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t b) {
    return __ushort_as_bfloat16((unsigned short)b);
}

// Like load_slots, into raw slots; columns at or past `end` hold -inf.
template <typename T, int K, int STRIDE>
__device__ __forceinline__ void load_raw(const T* row, int begin, int end, int t, bool vec,
                                         uint4 (&r)[K]) {
    constexpr int V = Vec16<T>::size;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        if (vec && col < end) {
            r[k] = *reinterpret_cast<const uint4*>(row + col);
        } else {  // element by element, packed with shifts (no address taken: r stays in registers)
            uint32_t b[V];
#pragma unroll
            for (int i = 0; i < V; ++i) b[i] = bits(col + i < end ? row[col + i] : neg_inf<T>());
            if constexpr (V == 4) r[k] = make_uint4(b[0], b[1], b[2], b[3]);
            else r[k] = make_uint4(b[0] | b[1] << 16, b[2] | b[3] << 16, b[4] | b[5] << 16, b[6] | b[7] << 16);
        }
    }
}

// f(x) for each held value x, converted to float one word at a time.
template <typename T, int K, typename F>
__device__ __forceinline__ void each_value(const uint4 (&r)[K], F f) {
    float x[per_word<T>];
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unpack_word<T>(word(r[k], j), x);
#pragma unroll
            for (int i = 0; i < per_word<T>; ++i) f(x[i]);
        }
}

// The largest held value.
template <typename T, int K>
__device__ __forceinline__ float raw_max(const uint4 (&r)[K]) {
    if constexpr (sizeof(T) == 2) {  // two at a time, no conversion (NaN is ignored, as fmaxf)
        using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
        T2 m2 = {neg_inf<T>(), neg_inf<T>()};
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                uint32_t w = word(r[k], j);
                m2 = __hmax2(m2, *reinterpret_cast<T2*>(&w));
            }
        return fmaxf(to_float(m2.x), to_float(m2.y));
    }
    float m = -CUDART_INF_F;
    each_value<T>(r, [&](float x) { m = fmaxf(m, x); });
    return m;
}

// sum(exp(x - m)) over the held values, the offset 0 when m = -inf (as exp_sum_in_place).
template <typename T, int K>
__device__ __forceinline__ float raw_exp_sum(const uint4 (&r)[K], float m) {
    const float off = m == -CUDART_INF_F ? 0.f : m;
    float s = 0.f;
    each_value<T>(r, [&](float x) { s += fast_exp2((x - off) * LOG2E); });
    return s;
}

// Write exp(x - m) * f for the held values (the same columns load_raw read).
template <typename T, int K, int STRIDE>
__device__ __forceinline__ void store_raw(T* row, int begin, int end, int t, bool vec,
                                          const uint4 (&r)[K], float m, float f) {
    constexpr int V = Vec16<T>::size, W = per_word<T>;
    const float off = m == -CUDART_INF_F ? 0.f : m;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int col = begin + (k * STRIDE + t) * V;
        uint32_t o[4];
        float x[W];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unpack_word<T, true>(word(r[k], j), x);
#pragma unroll
            for (int i = 0; i < W; ++i) x[i] = fast_exp2((x[i] - off) * LOG2E) * f;
            o[j] = pack_word<T>(x);
        }
        if (vec) {
            if (col < end) *reinterpret_cast<uint4*>(row + col) = make_uint4(o[0], o[1], o[2], o[3]);
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i) {
                uint32_t b = o[i / W] >> (32 / W) * (i % W);
                if (col + i < end) row[col + i] = from_bits<T>(b);
            }
        }
    }
}
// --8<-- [end:raw]

// --8<-- [start:lean_total]
// The whole row's {max, sum} with v6's lean reductions: the block merges its warps'
// partials into `slot`, a cluster barrier makes every block's slot visible, then the first warp
// reads the CLUSTER slots through distributed shared memory and merges them into `total`. All
// threads may read `total` after the caller's next __syncthreads(); the caller must also keep
// its `slot` alive until every block of the cluster has read it.
template <int THREADS, int CLUSTER>
__device__ __forceinline__ void cluster_total_lean(MaxSum mine, MaxSum& slot, MaxSum& total,
                                                   int parity = 0) {
    cg::cluster_group cluster = cg::this_cluster();
    const int t = threadIdx.x;
    MaxSum part = block_merge_lean<THREADS / 32>(mine, parity);
    if (t == 0) slot = part;
    cluster.sync();  // every block's partial is written and visible cluster-wide
    if (t < 32) {
        MaxSum row_total = warp_merge_lean(t < CLUSTER ? *cluster.map_shared_rank(&slot, t)
                                                       : MaxSum{-CUDART_INF_F, 0.f});
        if (t == 0) total = row_total;
    }
}
// --8<-- [end:lean_total]

// --8<-- [start:kernel]
template <typename T, int THREADS, int K, int CLUSTER>
__device__ void lean_cluster_softmax(const T* x, T* y, long long M, int N, long long x_stride) {
    __shared__ MaxSum slot;   // this block's partial, read by every block of the cluster
    __shared__ MaxSum total;  // the whole row's {max, sum}
    const int rank = cg::this_cluster().block_rank();
    const long long row = blockIdx.x / CLUSTER;
    int begin, end;  // this block's columns of the row
    cluster_columns<T, CLUSTER>(N, rank, begin, end);
    const bool vec = rows_aligned16(x, y, N, x_stride);

    uint4 r[K];
    load_raw<T, K, THREADS>(x + row * x_stride, begin, end, threadIdx.x, vec, r);
    MaxSum mine;  // this warp's part of the chunk
    mine.m = warp_max(raw_max<T>(r));
    mine.s = warp_sum(raw_exp_sum<T>(r, mine.m));
    cluster_total_lean<THREADS, CLUSTER>(mine, slot, total);
    cluster_arrive();  // this block is done reading the others' shared memory
    __syncthreads();
    store_raw<T, K, THREADS>(y + row * (long long)N, begin, end, threadIdx.x, vec, r, mine.m,
                             weight(mine.m, total.m) / total.s);
    cluster_wait();  // nobody exits while another block may still read its `slot`
}
// --8<-- [end:kernel]

// Registers for 2048 threads per SM with K = 4 slots (16 registers of data), 1024 with K = 8.
constexpr int v7_min_blocks(int threads, int k) { return (k <= 4 ? 2048 : 1024) / threads; }

// --8<-- [start:configs]
// (THREADS, K, CLUSTER): a block holds THREADS x K slots of 16 bytes, raw; CLUSTER blocks a row.
#define V7_BLOCKS(X, C) X(256, 4, C) X(512, 4, C) X(1024, 4, C) X(512, 8, C) X(1024, 8, C)
#define V7_CONFIGS(X) EVERY_CLUSTER(V7_BLOCKS, X)
// --8<-- [end:configs]
#define V7_KERNEL(tag, T, THREADS, K, CLUSTER)                                                     \
    SOFTMAX_EXPORT(softmax_v7_t##THREADS##_k##K##_c##CLUSTER##_##tag, T,                           \
                   __cluster_dims__(CLUSTER, 1, 1)                                                 \
                   __launch_bounds__(THREADS, v7_min_blocks(THREADS, K)),                          \
                   lean_cluster_softmax<T, THREADS, K, CLUSTER>)
#define V7_EVERY_DTYPE(...) SOFTMAX_EVERY_DTYPE(V7_KERNEL, __VA_ARGS__)
#if __INCLUDE_LEVEL__ == 0  // this file is the one being built, not a later rung including it
V7_CONFIGS(V7_EVERY_DTYPE)
#endif
