// Lab 00: the smallest useful kernel. One thread per element: y[i] = a[i] + b[i].
// --8<-- [start:kernel]
extern "C" __global__ void vector_add(const float* a, const float* b, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
// --8<-- [end:kernel]
