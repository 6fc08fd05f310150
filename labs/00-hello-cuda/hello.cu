// Lab 00, route (a): a complete CUDA C program with its own main(), built by one nvcc command.
//
//   nvcc -O2 -arch=sm_90a -o hello labs/00-hello-cuda/hello.cu   # Hopper (H100, H200)
//   nvcc -O2 -arch=sm_89  -o hello labs/00-hello-cuda/hello.cu   # Ada (RTX 40xx, L4, L40)
//   nvcc -O2 -arch=sm_80  -o hello labs/00-hello-cuda/hello.cu   # Ampere (A100)
//   ./hello            # or ./hello 123456 for another length
//
// It allocates three vectors on the device, copies two of them in, launches a vector-add
// kernel, copies the result back and compares it with the same sum done on the host.
// Every CUDA call is checked: an error stops the program with its file, line and message.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

// --8<-- [start:check]
// Wrap every CUDA runtime call: on failure print where and why, then exit with status 1.
#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n  in %s\n", __FILE__,     \
                         __LINE__, cudaGetErrorName(err_), cudaGetErrorString(err_),  \
                         #call);                                                      \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)
// --8<-- [end:check]

// --8<-- [start:kernel]
// One thread per element. The grid is rounded up, so the last block may have spare threads.
__global__ void vector_add(const float* a, const float* b, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
// --8<-- [end:kernel]

int main(int argc, char** argv) {
    // --8<-- [start:device]
    long long n = argc > 1 ? std::atoll(argv[1]) : 1000003;  // not a multiple of the block
    if (n < 1) {
        std::fprintf(stderr, "usage: %s [n >= 1]\n", argv[0]);
        return 2;
    }
    int device = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("device %d: %s, compute capability %d.%d, %d SMs\n", device, prop.name,
                prop.major, prop.minor, prop.multiProcessorCount);
    // --8<-- [end:device]

    // --8<-- [start:host_to_device]
    std::vector<float> a(n), b(n), out(n);
    for (long long i = 0; i < n; ++i) {  // exact in float32: small integers and halves
        a[i] = (float)(i % 1000);
        b[i] = 0.5f * (float)(i % 7);
    }
    size_t bytes = (size_t)n * sizeof(float);
    float *d_a = nullptr, *d_b = nullptr, *d_out = nullptr;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
    // --8<-- [end:host_to_device]

    // --8<-- [start:launch]
    int threads = 256;
    long long blocks = (n + threads - 1) / threads;
    vector_add<<<(unsigned)blocks, threads>>>(d_a, d_b, d_out, n);
    CHECK(cudaGetLastError());       // a bad launch configuration is reported here
    CHECK(cudaDeviceSynchronize());  // an error while the kernel ran is reported here
    // --8<-- [end:launch]

    // --8<-- [start:verify]
    CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    long long wrong = 0;
    for (long long i = 0; i < n; ++i) {
        if (out[i] != a[i] + b[i]) {
            if (wrong < 5)
                std::fprintf(stderr, "out[%lld] = %g, expected %g\n", i, out[i], a[i] + b[i]);
            ++wrong;
        }
    }
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_out));
    if (wrong) {
        std::printf("FAIL: %lld of %lld elements differ\n", wrong, n);
        return 1;
    }
    std::printf("PASS: %lld elements, %lld blocks of %d threads\n", n, blocks, threads);
    return 0;
    // --8<-- [end:verify]
}
