// FlexLink gradient casts for the data-parallel buckets: float <-> bfloat16 / half.
//
// The conversions are copied from io/flexlink/cuda/reduce.cu and match io.flexlink.runtime.host.FloatFormats
// bit for bit (round to nearest even; half and bfloat16 overflow to infinity; a NaN keeps its sign and leading
// payload bits and is made quiet). Change all three together.
//
// Kernels (grid-stride, any alignment, any count):
//   flexlink_cast_f32_to_bf16(const float* src, unsigned short* dst, unsigned long long count)
//   flexlink_cast_bf16_to_f32(const unsigned short* src, float* dst, unsigned long long count)
//   flexlink_cast_f32_to_f16 / flexlink_cast_f16_to_f32 likewise.

typedef unsigned long long fl_u64;

__device__ __forceinline__ unsigned fl_round_magnitude(unsigned a, int mBits, int bias) {
    int exp = (int)(a >> 23);
    if (exp >= 128 - bias) {
        int shift = 23 - mBits;
        unsigned r = a - ((unsigned)(127 - bias) << 23);
        r += (1u << (shift - 1)) - 1u + ((r >> shift) & 1u);
        return r >> shift;
    }
    unsigned m = (a & 0x7FFFFFu) | 0x800000u;
    int shift = 151 - bias - mBits - exp;
    if (shift > 24) {
        return 0u;
    }
    unsigned q = m >> shift;
    unsigned rem = m & ((1u << shift) - 1u);
    unsigned half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u) != 0u)) {
        q++;
    }
    return q;
}

__device__ __forceinline__ float fl_half_to_float(unsigned h) {
    unsigned sign = (h & 0x8000u) << 16;
    unsigned e = (h >> 10) & 0x1Fu;
    unsigned m = h & 0x3FFu;
    if (e == 0x1Fu) return __uint_as_float(sign | 0x7F800000u | (m << 13));
    if (e != 0u) return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
    return __uint_as_float(sign | __float_as_uint((float)m * 0x1p-24f));
}

__device__ __forceinline__ unsigned short fl_float_to_half(float f) {
    unsigned x = __float_as_uint(f);
    unsigned sign = (x >> 16) & 0x8000u;
    unsigned a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) {
        return (unsigned short)(a == 0x7F800000u ? sign | 0x7C00u : sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    }
    unsigned c = fl_round_magnitude(a, 10, 15);
    return (unsigned short)(sign | (c < 0x7C00u ? c : 0x7C00u));
}

__device__ __forceinline__ float fl_bf16_to_float(unsigned b) {
    return __uint_as_float((b & 0xFFFFu) << 16);
}

__device__ __forceinline__ unsigned short fl_float_to_bf16(float f) {
    unsigned x = __float_as_uint(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x40u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (unsigned short)(x >> 16);
}

#define FL_GRID_STRIDE(i, count)                                                             \
    for (fl_u64 i = (fl_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (count);             \
         i += (fl_u64)gridDim.x * blockDim.x)

extern "C" __global__ void flexlink_cast_f32_to_bf16(const float* src, unsigned short* dst, fl_u64 count) {
    FL_GRID_STRIDE(i, count) { dst[i] = fl_float_to_bf16(src[i]); }
}

extern "C" __global__ void flexlink_cast_bf16_to_f32(const unsigned short* src, float* dst, fl_u64 count) {
    FL_GRID_STRIDE(i, count) { dst[i] = fl_bf16_to_float(src[i]); }
}

extern "C" __global__ void flexlink_cast_f32_to_f16(const float* src, unsigned short* dst, fl_u64 count) {
    FL_GRID_STRIDE(i, count) { dst[i] = fl_float_to_half(src[i]); }
}

extern "C" __global__ void flexlink_cast_f16_to_f32(const unsigned short* src, float* dst, fl_u64 count) {
    FL_GRID_STRIDE(i, count) { dst[i] = fl_half_to_float(src[i]); }
}
