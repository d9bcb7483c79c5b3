// FlexLink elementwise reduction kernels: dst[i] = a[i] (op) b[i].
//
// These semantics must match io.flexlink.runtime.host.HostReduce (and FloatFormats) bit for bit;
// change both together. Summary:
//  - integers: SUM/PROD wrap around; MAX/MIN signed or unsigned by type; AVG = wrapped sum / divisor,
//    truncating, in the type's signedness.
//  - float/double compute in their own precision; half, bfloat16 and fp8 decode to float (exact),
//    compute in float and round back to nearest even (half/bf16 overflow to inf, fp8 saturates to
//    the largest finite value, like __NV_SATFINITE). AVG divides before adding: a / d + b / d for a divisor d > 0,
//    a + b / -d for d < 0 (io.flexlink.runtime.ReduceChain says which step uses which).
//  - MAX/MIN: a NaN operand yields the other (fmaxf/fminf); +0/-0 ties give +0 for MAX, -0 for MIN.
//  - every NaN result is one canonical NaN per type (0x7FFF.. for fp64/fp32/fp16/bf16, 0x7F for fp8).
// The conversions are written out here (no cuda_fp16/bf16/fp8.h) so that the rounding is visibly
// the same as on the host; on sm_89+ the kernels use the equivalent single cvt instructions.
// Compile with IEEE float settings (NVRTC's defaults: no -use_fast_math, -ftz=false,
// -prec-div=true); no expression here can be contracted into an FMA.
//
// Kernels: flexlink_reduce_<type>_<op>(void* dst, const void* a, const void* b,
//                                      unsigned long long count, int divisor)
// dst may equal a or b; otherwise no overlap. b may be mapped pinned host memory, so every operand
// is read with plain (coherent) global loads: no __restrict__, no __ldg.

typedef unsigned long long fl_u64;

// ------------------------------------------------------------------ narrow float formats

// Rounds a finite positive binary32 magnitude (raw bits) to a format with mBits mantissa bits and
// exponent bias `bias`, to nearest even; the exponent field is unbounded (callers clamp overflow).
__device__ __forceinline__ unsigned fl_round_magnitude(unsigned a, int mBits, int bias) {
    int exp = (int)(a >> 23);
    if (exp >= 128 - bias) {
        int shift = 23 - mBits;
        unsigned r = a - ((unsigned)(127 - bias) << 23);
        r += (1u << (shift - 1)) - 1u + ((r >> shift) & 1u);
        return r >> shift;
    }
    unsigned m = (a & 0x7FFFFFu) | 0x800000u;
    int shift = 151 - bias - mBits - exp;  // value = m * 2^(exp - 150); unit = 2^(1 - bias - mBits)
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
    return __uint_as_float(sign | __float_as_uint((float)m * 0x1p-24f));  // subnormal or zero: exact
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

__device__ __forceinline__ float fl_e4m3_to_float(unsigned b) {
    unsigned sign = (b & 0x80u) << 24;
    unsigned e = (b >> 3) & 0xFu;
    unsigned m = b & 0x7u;
    if (e == 0xFu && m == 0x7u) return __uint_as_float(sign | 0x7FC00000u);
    if (e != 0u) return __uint_as_float(sign | ((e + 120u) << 23) | (m << 20));
    return __uint_as_float(sign | __float_as_uint((float)m * 0x1p-9f));
}

__device__ __forceinline__ unsigned char fl_float_to_e4m3(float f) {
    unsigned x = __float_as_uint(f);
    unsigned sign = (x >> 24) & 0x80u;
    unsigned a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (unsigned char)(sign | 0x7Fu);
    if (a == 0x7F800000u) return (unsigned char)(sign | 0x7Eu);
    unsigned c = fl_round_magnitude(a, 3, 7);
    return (unsigned char)(sign | (c < 0x7Eu ? c : 0x7Eu));
}

// E5M2 is the upper byte of a binary16.
__device__ __forceinline__ float fl_e5m2_to_float(unsigned b) {
    return fl_half_to_float((b & 0xFFu) << 8);
}

__device__ __forceinline__ unsigned char fl_float_to_e5m2(float f) {
    unsigned x = __float_as_uint(f);
    unsigned sign = (x >> 24) & 0x80u;
    unsigned a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (unsigned char)(sign | 0x7Eu | ((a >> 21) & 1u));
    if (a == 0x7F800000u) return (unsigned char)(sign | 0x7Bu);
    unsigned c = fl_round_magnitude(a, 2, 15);
    return (unsigned char)(sign | (c < 0x7Bu ? c : 0x7Bu));
}

// Hardware conversions (sm_89+), used by the kernels where available: each is one instruction
// with the same IEEE semantics as the software versions above (RNE; half overflows to inf; FP8
// .satfinite), which stay as the reference and as the fallback for older targets. An exhaustive
// comparison on an H200 (all 2^32 non-NaN floats encoded, all codes decoded) found no difference.
// NaN never reaches an encoder (enc() canonicalizes first), and a decoded NaN's payload is never
// stored (MAX/MIN return the other operand; any other NaN result is canonicalized).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
__device__ __forceinline__ float fl_hw_half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned short fl_hw_float_to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float fl_hw_e4m3_to_float(unsigned char b) {
    unsigned h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((unsigned short)b));
    return fl_hw_half_to_float((unsigned short)h2);
}
__device__ __forceinline__ unsigned char fl_hw_float_to_e4m3(float f) {
    unsigned short p;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(p) : "f"(0.0f), "f"(f));  // f -> low byte
    return (unsigned char)p;
}
__device__ __forceinline__ float fl_hw_e5m2_to_float(unsigned char b) {
    return fl_hw_half_to_float((unsigned short)(b << 8));
}
__device__ __forceinline__ unsigned char fl_hw_float_to_e5m2(float f) {
    unsigned short p;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(p) : "f"(0.0f), "f"(f));
    return (unsigned char)p;
}
#define FL_HALF_DEC fl_hw_half_to_float
#define FL_HALF_ENC fl_hw_float_to_half
#define FL_E4M3_DEC fl_hw_e4m3_to_float
#define FL_E4M3_ENC fl_hw_float_to_e4m3
#define FL_E5M2_DEC fl_hw_e5m2_to_float
#define FL_E5M2_ENC fl_hw_float_to_e5m2
#else
#define FL_HALF_DEC fl_half_to_float
#define FL_HALF_ENC fl_float_to_half
#define FL_E4M3_DEC fl_e4m3_to_float
#define FL_E4M3_ENC fl_float_to_e4m3
#define FL_E5M2_DEC fl_e5m2_to_float
#define FL_E5M2_ENC fl_float_to_e5m2
#endif

// ------------------------------------------------------------------ fmaxf/fminf with ordered zeros

__device__ __forceinline__ float fl_max(float x, float y) {
    if (x != x) return y;
    if (y != y || x > y) return x;
    if (y > x) return y;
    return __uint_as_float(__float_as_uint(x) & __float_as_uint(y));
}
__device__ __forceinline__ float fl_min(float x, float y) {
    if (x != x) return y;
    if (y != y || x < y) return x;
    if (y < x) return y;
    return __uint_as_float(__float_as_uint(x) | __float_as_uint(y));
}
__device__ __forceinline__ double fl_max(double x, double y) {
    if (x != x) return y;
    if (y != y || x > y) return x;
    if (y > x) return y;
    return __longlong_as_double(__double_as_longlong(x) & __double_as_longlong(y));
}
__device__ __forceinline__ double fl_min(double x, double y) {
    if (x != x) return y;
    if (y != y || x < y) return x;
    if (y < x) return y;
    return __longlong_as_double(__double_as_longlong(x) | __double_as_longlong(y));
}

// ------------------------------------------------------------------ element types

enum { FL_SUM, FL_PROD, FL_MAX, FL_MIN, FL_AVG };

// S: storage type, U: unsigned type of the same width (wrapping arithmetic without signed overflow).
template <typename S, typename U>
struct FlInt {
    typedef S Storage;
    static constexpr bool FLOAT = false;
    template <int OP>
    static __device__ __forceinline__ S apply(S a, S b, int divisor) {
        if constexpr (OP == FL_SUM) return (S)(U)((U)a + (U)b);
        if constexpr (OP == FL_PROD) return (S)(U)((U)a * (U)b);
        if constexpr (OP == FL_MAX) return a > b ? a : b;
        if constexpr (OP == FL_MIN) return a < b ? a : b;
        if constexpr (OP == FL_AVG) {
            S s = (S)(U)((U)a + (U)b);
            return (S)(s / divisor);  // usual conversions: unsigned types divide unsigned
        }
    }
    // x * s (wrapping) or x / divisor (truncating)
    static __device__ __forceinline__ S scale(S x, S s, bool mul, int divisor) {
        return mul ? (S)(U)((U)x * (U)s) : (S)(x / divisor);
    }
};

// F provides Storage, Compute, dec(Storage) -> Compute and enc(Compute) -> Storage (NaN canonical).
template <typename F>
struct FlFloat {
    typedef typename F::Storage Storage;
    typedef typename F::Compute C;
    static constexpr bool FLOAT = true;
    template <int OP>
    static __device__ __forceinline__ Storage apply(Storage a, Storage b, int divisor) {
        C x = F::dec(a);
        C y = F::dec(b);
        if constexpr (OP == FL_SUM) return F::enc(x + y);
        if constexpr (OP == FL_PROD) return F::enc(x * y);
        if constexpr (OP == FL_MAX) return F::enc(fl_max(x, y));
        if constexpr (OP == FL_MIN) return F::enc(fl_min(x, y));
        if constexpr (OP == FL_AVG) {
            // divide before adding (NCCL's pre-multiplied average): no partial sum overflows
            if (divisor > 0) return F::enc(x / (C)divisor + y / (C)divisor);
            return F::enc(x + y / (C)(-divisor));
        }
    }
    // x * s or x / divisor, computed as the other operations are and rounded once
    static __device__ __forceinline__ Storage scale(Storage x, Storage s, bool mul, int divisor) {
        return mul ? F::enc(F::dec(x) * F::dec(s)) : F::enc(F::dec(x) / (C)divisor);
    }
};

struct FlF32 {
    typedef float Storage; typedef float Compute;
    static __device__ __forceinline__ float dec(float x) { return x; }
    static __device__ __forceinline__ float enc(float r) { return r != r ? __uint_as_float(0x7FFFFFFFu) : r; }
};
struct FlF64 {
    typedef double Storage; typedef double Compute;
    static __device__ __forceinline__ double dec(double x) { return x; }
    static __device__ __forceinline__ double enc(double r) {
        return r != r ? __longlong_as_double(0x7FFFFFFFFFFFFFFFLL) : r;
    }
};
struct FlF16 {
    typedef unsigned short Storage; typedef float Compute;
    static __device__ __forceinline__ float dec(unsigned short x) { return FL_HALF_DEC(x); }
    static __device__ __forceinline__ unsigned short enc(float r) { return r != r ? 0x7FFF : FL_HALF_ENC(r); }
};
struct FlBf16 {
    typedef unsigned short Storage; typedef float Compute;
    static __device__ __forceinline__ float dec(unsigned short x) { return fl_bf16_to_float(x); }
    static __device__ __forceinline__ unsigned short enc(float r) { return r != r ? 0x7FFF : fl_float_to_bf16(r); }
};
struct FlE4m3 {
    typedef unsigned char Storage; typedef float Compute;
    static __device__ __forceinline__ float dec(unsigned char x) { return FL_E4M3_DEC(x); }
    static __device__ __forceinline__ unsigned char enc(float r) { return r != r ? 0x7F : FL_E4M3_ENC(r); }
};
struct FlE5m2 {
    typedef unsigned char Storage; typedef float Compute;
    static __device__ __forceinline__ float dec(unsigned char x) { return FL_E5M2_DEC(x); }
    static __device__ __forceinline__ unsigned char enc(float r) { return r != r ? 0x7F : FL_E5M2_ENC(r); }
};

// ------------------------------------------------------------------ the grid-stride body

template <typename T, int OP>
__device__ __forceinline__ void fl_reduce(void* dst, const void* a, const void* b, fl_u64 count, int divisor) {
    typedef typename T::Storage S;
    constexpr int N = 16 / sizeof(S);
    const fl_u64 tid = (fl_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const fl_u64 stride = (fl_u64)gridDim.x * blockDim.x;
    fl_u64 start = 0;
    if ((((fl_u64)dst | (fl_u64)a | (fl_u64)b) & 15u) == 0u) {
        union Vec { uint4 v; S e[N]; };
        const fl_u64 nvec = count / N;
        for (fl_u64 v = tid; v < nvec; v += stride) {
            Vec x, y, r;
            x.v = ((const uint4*)a)[v];
            y.v = ((const uint4*)b)[v];
#pragma unroll
            for (int k = 0; k < N; k++) r.e[k] = T::template apply<OP>(x.e[k], y.e[k], divisor);
            ((uint4*)dst)[v] = r.v;
        }
        start = nvec * N;
    }
    for (fl_u64 i = start + tid; i < count; i += stride) {
        ((S*)dst)[i] = T::template apply<OP>(((const S*)a)[i], ((const S*)b)[i], divisor);
    }
}

// ------------------------------------------------------------------ a whole chain in one kernel

// Step t of the chain of reductions over `ranks` inputs (io.flexlink.runtime.ReduceChain): a floating-point
// AVG divides both operands at step 0 and the new operand after; an integer AVG sums and divides at the
// last step; the other operations apply as they are.
template <typename T, int OP>
__device__ __forceinline__ typename T::Storage fl_step(typename T::Storage x, typename T::Storage y, int t,
                                                       int ranks) {
    if constexpr (OP == FL_AVG) {
        if constexpr (T::FLOAT) {
            return T::template apply<FL_AVG>(x, y, t == 0 ? ranks : -ranks);
        } else {
            return t < ranks - 2 ? T::template apply<FL_SUM>(x, y, ranks) : T::template apply<FL_AVG>(x, y, ranks);
        }
    } else {
        return T::template apply<OP>(x, y, ranks);
    }
}

// dst = a op row[0] op row[1] ... op row[k-1], row t at rows + t * pitch bytes: each element read once from
// every row and written once, with the same arithmetic, in the same order, as k two-operand launches.
template <typename T, int OP>
__device__ __forceinline__ void fl_rows(void* dst, const void* a, const char* rows, fl_u64 pitch, fl_u64 count,
                                        int k, int ranks) {
    typedef typename T::Storage S;
    constexpr int N = 16 / sizeof(S);
    const fl_u64 tid = (fl_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const fl_u64 stride = (fl_u64)gridDim.x * blockDim.x;
    fl_u64 start = 0;
    if ((((fl_u64)dst | (fl_u64)a | (fl_u64)rows | pitch) & 15u) == 0u) {
        union Vec { uint4 v; S e[N]; };
        const fl_u64 nvec = count / N;
        for (fl_u64 v = tid; v < nvec; v += stride) {
            Vec x;
            x.v = ((const uint4*)a)[v];
            for (int t = 0; t < k; t++) {
                Vec y;
                y.v = ((const uint4*)(rows + (fl_u64)t * pitch))[v];
#pragma unroll
                for (int e = 0; e < N; e++) x.e[e] = fl_step<T, OP>(x.e[e], y.e[e], t, ranks);
            }
            ((uint4*)dst)[v] = x.v;
        }
        start = nvec * N;
    }
    for (fl_u64 i = start + tid; i < count; i += stride) {
        S x = ((const S*)a)[i];
        for (int t = 0; t < k; t++) x = fl_step<T, OP>(x, ((const S*)(rows + (fl_u64)t * pitch))[i], t, ranks);
        ((S*)dst)[i] = x;
    }
}

#define FL_KERNEL(NAME, T, OP)                                                                   \
    extern "C" __global__ void flexlink_reduce_##NAME(void* dst, const void* a, const void* b,   \
                                                      unsigned long long count, int divisor) {   \
        fl_reduce<T, OP>(dst, a, b, count, divisor);                                             \
    }
// dst = a * (*scalar) when scalar is not null (NCCL's PreMulSum), else dst = a / divisor (a pre-scaled
// average): each element read and written once.
template <typename T>
__device__ __forceinline__ void fl_scale(void* dst, const void* a, fl_u64 count, const void* scalar, int divisor) {
    typedef typename T::Storage S;
    const fl_u64 tid = (fl_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const fl_u64 stride = (fl_u64)gridDim.x * blockDim.x;
    const bool mul = scalar != 0;
    const S s = mul ? *(const S*)scalar : (S)0;
    for (fl_u64 i = tid; i < count; i += stride) {
        ((S*)dst)[i] = T::scale(((const S*)a)[i], s, mul, divisor);
    }
}

#define FL_SCALE_KERNEL(NAME, T)                                                                     \
    extern "C" __global__ void flexlink_scale_##NAME(void* dst, const void* a, unsigned long long count, \
                                                     const void* scalar, int divisor) {              \
        fl_scale<T>(dst, a, count, scalar, divisor);                                                 \
    }
#define FL_ROWS_KERNEL(NAME, T, OP)                                                                  \
    extern "C" __global__ void flexlink_rows_##NAME(void* dst, const void* a, const void* rows,          \
                                                    unsigned long long pitch, unsigned long long count,  \
                                                    int k, int ranks) {                                  \
        fl_rows<T, OP>(dst, a, (const char*)rows, pitch, count, k, ranks);                               \
    }
#define FL_KERNELS(TYPE, T)                 \
    FL_KERNEL(TYPE##_sum, T, FL_SUM)        \
    FL_KERNEL(TYPE##_prod, T, FL_PROD)      \
    FL_KERNEL(TYPE##_max, T, FL_MAX)        \
    FL_KERNEL(TYPE##_min, T, FL_MIN)        \
    FL_KERNEL(TYPE##_avg, T, FL_AVG)        \
    FL_ROWS_KERNEL(TYPE##_sum, T, FL_SUM)   \
    FL_ROWS_KERNEL(TYPE##_prod, T, FL_PROD) \
    FL_ROWS_KERNEL(TYPE##_max, T, FL_MAX)   \
    FL_ROWS_KERNEL(TYPE##_min, T, FL_MIN)   \
    FL_ROWS_KERNEL(TYPE##_avg, T, FL_AVG)   \
    FL_SCALE_KERNEL(TYPE, T)

typedef FlInt<signed char, unsigned char> FlI8;
typedef FlInt<unsigned char, unsigned char> FlU8;
typedef FlInt<int, unsigned int> FlI32;
typedef FlInt<unsigned int, unsigned int> FlU32;
typedef FlInt<long long, unsigned long long> FlI64;
typedef FlInt<unsigned long long, unsigned long long> FlU64;

FL_KERNELS(int8, FlI8)
FL_KERNELS(uint8, FlU8)
FL_KERNELS(int32, FlI32)
FL_KERNELS(uint32, FlU32)
FL_KERNELS(int64, FlI64)
FL_KERNELS(uint64, FlU64)
FL_KERNELS(float16, FlFloat<FlF16>)
FL_KERNELS(float32, FlFloat<FlF32>)
FL_KERNELS(float64, FlFloat<FlF64>)
FL_KERNELS(bfloat16, FlFloat<FlBf16>)
FL_KERNELS(float8e4m3, FlFloat<FlE4m3>)
FL_KERNELS(float8e5m2, FlFloat<FlE5m2>)
