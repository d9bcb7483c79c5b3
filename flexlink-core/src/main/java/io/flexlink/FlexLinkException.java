package io.flexlink;

/** Any failure of a FlexLink call; {@link #result()} is the code NCCL would have returned. */
public class FlexLinkException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Result result;

    public FlexLinkException(Result result, String message) {
        super(message);
        this.result = result;
    }

    public FlexLinkException(Result result, String message, Throwable cause) {
        super(message, cause);
        this.result = result;
    }

    /** NCCL's result code for this failure (never SUCCESS). */
    public Result result() {
        return result;
    }

    @Override
    public String getMessage() {
        return result.name() + ": " + super.getMessage();
    }

    /** The message without the result prefix. */
    public String detail() {
        return super.getMessage();
    }
}
