package io.flexlink.runtime.host;

import static io.flexlink.runtime.host.HostReduce.U;

import io.flexlink.DataType;

/**
 * The host backend's scaling, bit-identical to {@code flexlink_scale_*} in reduce.cu: {@code x * s} or
 * {@code x / n} per element, integers wrapping (the product) and truncating (the quotient, signed or
 * unsigned by type), floating-point types computed in float (fp16, bf16, fp8 decoded exactly) or in their
 * own precision and rounded once, every NaN canonical.
 */
final class HostScale {
    private HostScale() {
    }

    static void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
        boolean mul = scalar != 0;
        int sz = type.size();
        for (long i = 0; i < count; i++) {
            long x = a + i * sz;
            long d = dst + i * sz;
            switch (type) {
                case INT8: U.putByte(d, (byte) (mul ? U.getByte(x) * U.getByte(scalar) : U.getByte(x) / divisor)); break;
                case UINT8: U.putByte(d, (byte) (mul ? U.getByte(x) * U.getByte(scalar)
                        : (U.getByte(x) & 0xff) / divisor)); break;
                case INT32: U.putInt(d, mul ? U.getInt(x) * U.getInt(scalar) : U.getInt(x) / divisor); break;
                case UINT32: U.putInt(d, mul ? U.getInt(x) * U.getInt(scalar)
                        : Integer.divideUnsigned(U.getInt(x), divisor)); break;
                case INT64: U.putLong(d, mul ? U.getLong(x) * U.getLong(scalar) : U.getLong(x) / divisor); break;
                case UINT64: U.putLong(d, mul ? U.getLong(x) * U.getLong(scalar)
                        : Long.divideUnsigned(U.getLong(x), divisor)); break;
                case FLOAT32: {
                    float r = mul ? U.getFloat(x) * U.getFloat(scalar) : U.getFloat(x) / divisor;
                    U.putInt(d, r != r ? 0x7FFFFFFF : Float.floatToRawIntBits(r));
                    break;
                }
                case FLOAT64: {
                    double r = mul ? U.getDouble(x) * U.getDouble(scalar) : U.getDouble(x) / divisor;
                    U.putLong(d, r != r ? 0x7FFFFFFFFFFFFFFFL : Double.doubleToRawLongBits(r));
                    break;
                }
                case FLOAT16:
                case BFLOAT16: {
                    boolean bf = type == DataType.BFLOAT16;
                    float r = mul ? dec16(bf, U.getShort(x)) * dec16(bf, U.getShort(scalar))
                            : dec16(bf, U.getShort(x)) / divisor;
                    U.putShort(d, r != r ? (bf ? FloatFormats.BF16_NAN : FloatFormats.HALF_NAN)
                            : bf ? FloatFormats.floatToBf16(r) : FloatFormats.floatToHalf(r));
                    break;
                }
                default: {
                    boolean e5 = type == DataType.FLOAT8E5M2;
                    float r = mul ? dec8(e5, U.getByte(x)) * dec8(e5, U.getByte(scalar)) : dec8(e5, U.getByte(x)) / divisor;
                    U.putByte(d, r != r ? FloatFormats.FP8_NAN
                            : e5 ? FloatFormats.floatToE5m2(r) : FloatFormats.floatToE4m3(r));
                }
            }
        }
    }

    private static float dec16(boolean bf16, short x) {
        return bf16 ? FloatFormats.bf16ToFloat(x) : FloatFormats.halfToFloat(x);
    }

    private static float dec8(boolean e5m2, byte x) {
        return e5m2 ? FloatFormats.e5m2ToFloat(x) : FloatFormats.e4m3ToFloat(x);
    }
}
