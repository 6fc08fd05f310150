// CUDA's vector types with their sizes and alignments (a float4 is 16 bytes aligned to 16, so a
// load of one through reinterpret_cast is one 16-byte access), dim3, and the make_ functions.
#pragma once

#define EMU_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; };
#define EMU_VEC3(T, N) struct N##3 { T x, y, z; };
#define EMU_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };
#define EMU_VECS(T, N, A2, A4) \
    struct N##1 { T x; };       \
    EMU_VEC2(T, N, A2) EMU_VEC3(T, N) EMU_VEC4(T, N, A4)
EMU_VECS(signed char, char, 2, 4)
EMU_VECS(unsigned char, uchar, 2, 4)
EMU_VECS(short, short, 4, 8)
EMU_VECS(unsigned short, ushort, 4, 8)
EMU_VECS(int, int, 8, 16)
EMU_VECS(unsigned int, uint, 8, 16)
EMU_VECS(float, float, 8, 16)
EMU_VECS(long long, longlong, 16, 16)
EMU_VECS(unsigned long long, ulonglong, 16, 16)
EMU_VECS(double, double, 16, 16)

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define EMU_MAKE(N, T)                                                                         \
    EMU_INLINE N##1 make_##N##1(T x) { return N##1{x}; }                                           \
    EMU_INLINE N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                                   \
    EMU_INLINE N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }                           \
    EMU_INLINE N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
EMU_MAKE(char, signed char)
EMU_MAKE(uchar, unsigned char)
EMU_MAKE(short, short)
EMU_MAKE(ushort, unsigned short)
EMU_MAKE(int, int)
EMU_MAKE(uint, unsigned int)
EMU_MAKE(float, float)
EMU_MAKE(longlong, long long)
EMU_MAKE(ulonglong, unsigned long long)
EMU_MAKE(double, double)
