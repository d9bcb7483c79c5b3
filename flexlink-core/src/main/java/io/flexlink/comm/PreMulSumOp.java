package io.flexlink.comm;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.validate.Validator;

/**
 * A communicator's {@link PreMulSum}: a value, owning no memory. A scalar fixed at creation travels with
 * each call as its raw bits (the launcher writes them into the call's own staging word, in stream order,
 * as NCCL puts a host scalar into its kernel's arguments), so destroying the operation while calls that used
 * it are still queued is safe, and nothing must be freed; a device scalar is the caller's memory.
 */
final class PreMulSumOp implements PreMulSum {
    private final Object owner;
    private final DataType type;
    private final boolean onDevice;
    /** The host scalar as an element of {@link #type}, zero-extended; unused on the device. */
    private final long bits;
    /** The device scalar's address; 0 for a host scalar. */
    private final long address;
    private volatile boolean closed;

    private PreMulSumOp(Object owner, DataType type, boolean onDevice, long bits, long address) {
        this.owner = owner;
        this.type = type;
        this.onDevice = onDevice;
        this.bits = bits;
        this.address = address;
    }

    /** A host scalar, rounded to {@code type} now ({@link FloatFormats#fromDouble}). */
    static PreMulSumOp host(Object owner, double scalar, DataType type) {
        checkType(type);
        return new PreMulSumOp(owner, type, false, FloatFormats.fromDouble(type, scalar), 0);
    }

    /**
     * A host scalar given as an integer: integer types take its low {@code 8 * size} bits (a C cast, so a
     * UINT64 scalar may be passed as its bit pattern), floating-point types its value rounded to nearest even.
     */
    static PreMulSumOp host(Object owner, long scalar, DataType type) {
        checkType(type);
        long bits = type.isFloatingPoint() ? FloatFormats.fromDouble(type, (double) scalar)
                : type.size() == 8 ? scalar : scalar & ((1L << (8 * type.size())) - 1);
        return new PreMulSumOp(owner, type, false, bits, 0);
    }

    /** A scalar read from device memory of {@code device} at each call. */
    static PreMulSumOp device(Object owner, long address, DataType type, Backend backend, int device) {
        checkType(type);
        checkAddress(address, type, backend, device);
        return new PreMulSumOp(owner, type, true, 0, address);
    }

    /**
     * That {@code op} may run on {@code owner} with {@code type} (NCCL's checks: the operation is this
     * communicator's, not destroyed, made for the call's type), and where the backend can tell, that a device
     * scalar is still live memory of {@code device}. Returns the operation.
     */
    static PreMulSumOp check(PreMulSum op, Object owner, DataType type, Backend backend, int device) {
        if (!(op instanceof PreMulSumOp p) || p.owner != owner) {
            throw Validator.invalid("op: a PreMulSum of another communicator");
        }
        if (p.closed) {
            throw Validator.invalid("op: the PreMulSum was destroyed");
        }
        if (type != null && type != p.type) {
            throw Validator.invalid("op: the PreMulSum was made for " + p.type + ", the call's datatype is " + type);
        }
        if (p.onDevice) {
            checkAddress(p.address, p.type, backend, device);
        }
        return p;
    }

    private static void checkType(DataType type) {
        if (type == null) {
            throw Validator.invalid("datatype: null");
        }
    }

    private static void checkAddress(long address, DataType type, Backend backend, int device) {
        if (address == 0) {
            throw Validator.invalid("scalar: null");
        }
        String problem = backend.accessProblem(address, type.size(), device);
        if (problem != null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "scalar: " + problem);
        }
    }

    /** The host scalar's raw bits (unused for a device scalar). */
    long bits() {
        return bits;
    }

    /** The device scalar's address, or 0 for a host scalar. */
    long address() {
        return address;
    }

    @Override
    public DataType type() {
        return type;
    }

    @Override
    public boolean onDevice() {
        return onDevice;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "PreMulSum(" + type + (onDevice ? ", device scalar at 0x" + Long.toHexString(address)
                : ", scalar bits 0x" + Long.toHexString(bits)) + (closed ? ", destroyed)" : ")");
    }
}
