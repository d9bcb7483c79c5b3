package io.flexlink;

/**
 * The element types of NCCL, with NCCL's numeric codes ({@code ncclDataType_t}) and sizes.
 */
public enum DataType {
    INT8(0, 1, "int8"),
    UINT8(1, 1, "uint8"),
    INT32(2, 4, "int32"),
    UINT32(3, 4, "uint32"),
    INT64(4, 8, "int64"),
    UINT64(5, 8, "uint64"),
    FLOAT16(6, 2, "half"),
    FLOAT32(7, 4, "float"),
    FLOAT64(8, 8, "double"),
    BFLOAT16(9, 2, "bfloat16"),
    FLOAT8E4M3(10, 1, "f8e4m3"),
    FLOAT8E5M2(11, 1, "f8e5m2");

    private static final DataType[] BY_CODE = values();

    private final int code;
    private final int size;
    private final String ncclName;

    DataType(int code, int size, String ncclName) {
        this.code = code;
        this.size = size;
        this.ncclName = ncclName;
    }

    /** NCCL's {@code ncclDataType_t} value. */
    public int code() {
        return code;
    }

    /** Bytes per element. */
    public int size() {
        return size;
    }

    /** The name nccl-tests prints in its {@code type} column. */
    public String ncclName() {
        return ncclName;
    }

    /** True for the floating-point types (fp8, fp16, bf16, fp32, fp64). */
    public boolean isFloatingPoint() {
        return this == FLOAT16 || this == FLOAT32 || this == FLOAT64 || this == BFLOAT16
                || this == FLOAT8E4M3 || this == FLOAT8E5M2;
    }

    /** True for the unsigned integer types. */
    public boolean isUnsigned() {
        return this == UINT8 || this == UINT32 || this == UINT64;
    }

    /**
     * The type with NCCL code {@code code}.
     *
     * @throws FlexLinkException INVALID_ARGUMENT when no type has that code
     */
    public static DataType fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "datatype: unknown ncclDataType_t code " + code);
        }
        return BY_CODE[code];
    }

    /** Parses a name as nccl-tests prints it ({@code float}, {@code half}, ...) or as this enum names it. */
    public static DataType parse(String name) {
        if (name == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "datatype: null");
        }
        for (DataType t : BY_CODE) {
            if (t.ncclName.equalsIgnoreCase(name) || t.name().equalsIgnoreCase(name)) {
                return t;
            }
        }
        switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "char": return INT8;
            case "int": return INT32;
            case "fp16": case "float16": return FLOAT16;
            case "fp32": return FLOAT32;
            case "fp64": return FLOAT64;
            case "bf16": return BFLOAT16;
            case "fp8e4m3": case "float8e4m3": return FLOAT8E4M3;
            case "fp8e5m2": case "float8e5m2": return FLOAT8E5M2;
            default:
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "datatype: unknown type name '" + name + "'");
        }
    }
}
