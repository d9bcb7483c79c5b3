package io.flexlink;

/** NCCL's result codes ({@code ncclResult_t}), with the same numeric values. */
public enum Result {
    SUCCESS(0, "no error"),
    UNHANDLED_CUDA_ERROR(1, "unhandled cuda error"),
    SYSTEM_ERROR(2, "unhandled system error"),
    INTERNAL_ERROR(3, "internal error"),
    INVALID_ARGUMENT(4, "invalid argument"),
    INVALID_USAGE(5, "invalid usage"),
    REMOTE_ERROR(6, "remote process exited or there was a network error"),
    IN_PROGRESS(7, "NCCL operation in progress"),
    /** NCCL 2.30's {@code ncclTimeout}: an operation did not finish in time. */
    TIMEOUT(8, "operation timed out");

    private static final Result[] BY_CODE = values();

    private final int code;
    private final String description;

    Result(int code, String description) {
        this.code = code;
        this.description = description;
    }

    /** NCCL's {@code ncclResult_t} value. */
    public int code() {
        return code;
    }

    /** The text {@code ncclGetErrorString} gives for this code. */
    public String description() {
        return description;
    }

    /** The result with code {@code code}, or INTERNAL_ERROR for a code NCCL does not define. */
    public static Result fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : INTERNAL_ERROR;
    }
}
