package io.flexlink;

/** NCCL's built-in reduction operations with their {@code ncclRedOp_t} codes. */
public enum ReduceOp implements Reduction {
    SUM(0, "sum"),
    PROD(1, "prod"),
    MAX(2, "max"),
    MIN(3, "min"),
    /** Sum divided by the number of ranks; integer types divide the (wrapped) sum, truncating. */
    AVG(4, "avg");

    private static final ReduceOp[] BY_CODE = values();

    private final int code;
    private final String ncclName;

    ReduceOp(int code, String ncclName) {
        this.code = code;
        this.ncclName = ncclName;
    }

    /** NCCL's {@code ncclRedOp_t} value. */
    public int code() {
        return code;
    }

    /** The name nccl-tests prints in its {@code redop} column. */
    public String ncclName() {
        return ncclName;
    }

    /**
     * The operation with NCCL code {@code code}.
     *
     * @throws FlexLinkException INVALID_ARGUMENT when no built-in operation has that code
     */
    public static ReduceOp fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: unknown ncclRedOp_t code " + code);
        }
        return BY_CODE[code];
    }

    /** Parses {@code sum|prod|max|min|avg}. */
    public static ReduceOp parse(String name) {
        for (ReduceOp op : BY_CODE) {
            if (op.ncclName.equalsIgnoreCase(name) || op.name().equalsIgnoreCase(name)) {
                return op;
            }
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: unknown reduction '" + name + "'");
    }
}
