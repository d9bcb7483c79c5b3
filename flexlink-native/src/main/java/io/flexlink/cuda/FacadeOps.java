package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.Reduction;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;

/**
 * One facade communicator's PreMulSum operations ({@code ncclRedOpCreatePreMulSum}, {@code ncclRedOpDestroy})
 * and their {@code ncclRedOp_t} codes: {@code ncclNumOps + slot + SLOTS * generation}. A destroyed slot is
 * reused, as NCCL reuses its own, but under the next generation, so the code of a destroyed operation stays
 * invalid (until the generation wraps, after 524,287 reuses of one slot) instead of naming its successor.
 * Creation and destruction lock the table; a collective's lookup reads it without allocating.
 */
final class FacadeOps {
    /** Live operations per communicator at once. */
    static final int SLOTS = 4096;
    private static final int GENERATIONS = (Integer.MAX_VALUE - FlexNccl.ncclNumOps) / SLOTS;

    /** A live operation and the code it was given. */
    private record Live(PreMulSum op, int code) {
    }

    private volatile Live[] live = new Live[8];
    /** Per slot, the generation of its next (or current) operation. */
    private int[] generations = new int[8];

    /**
     * The operation of {@code code} for a call on {@code type} (null: any), or throws INVALID_ARGUMENT naming op;
     * the built-ins are ReduceOp's. The type is checked here too, before the call's stream is looked at.
     */
    Reduction reduction(int code, DataType type) {
        Reduction r = reduction(code);
        if (type != null && r instanceof PreMulSum p && p.type() != type) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: " + code + " was made for " + p.type()
                    + ", the call's datatype is " + type);
        }
        return r;
    }

    /** The operation of {@code code}, or throws INVALID_ARGUMENT naming op; the built-ins are ReduceOp's. */
    Reduction reduction(int code) {
        if (code >= 0 && code < FlexNccl.ncclNumOps) {
            return ReduceOp.fromCode(code);
        }
        Live[] table = live;
        int slot = code >= FlexNccl.ncclNumOps ? (code - FlexNccl.ncclNumOps) % SLOTS : -1;
        Live l = slot >= 0 && slot < table.length ? table[slot] : null;
        if (l == null || l.code != code) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: " + code
                    + " is neither a built-in operation nor a live PreMulSum of this communicator");
        }
        return l.op;
    }

    /** Adds {@code op}; returns its code. */
    synchronized int add(PreMulSum op) {
        Live[] table = live;
        int slot = 0;
        while (slot < table.length && table[slot] != null) {
            slot++;
        }
        if (slot == SLOTS) {
            op.close();
            throw new FlexLinkException(Result.INVALID_USAGE, "op: " + SLOTS + " PreMulSum operations of one "
                    + "communicator are live; destroy some first");
        }
        table = slot == table.length ? java.util.Arrays.copyOf(table, Math.min(SLOTS, 2 * table.length))
                : table.clone(); // a lookup racing with this sees the old table or the new, never half
        if (generations.length < table.length) {
            generations = java.util.Arrays.copyOf(generations, table.length);
        }
        int code = FlexNccl.ncclNumOps + slot + SLOTS * generations[slot];
        table[slot] = new Live(op, code);
        live = table;
        return code;
    }

    /** Destroys the operation of {@code code}; INVALID_ARGUMENT for a built-in, unknown or destroyed one. */
    synchronized void destroy(int code) {
        Reduction r = reduction(code);
        if (!(r instanceof PreMulSum op)) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "op: " + code + " is a built-in operation, "
                    + "not one of ncclRedOpCreatePreMulSum");
        }
        int slot = (code - FlexNccl.ncclNumOps) % SLOTS;
        op.close();
        generations[slot] = (generations[slot] + 1) % GENERATIONS;
        Live[] table = live.clone();
        table[slot] = null;
        live = table;
    }

    // ---- the facade's functions ----

    static int create(Object out, Pointer scalar, int datatype, int residence, ncclComm comm) {
        String call = "ncclRedOpCreatePreMulSum";
        if (!FacadeCalls.writable(out) || scalar == null || scalar.address() == 0) {
            return NcclFacade.failed(call, new FlexLinkException(Result.INVALID_ARGUMENT,
                    (FacadeCalls.writable(out) ? "scalar" : "op") + ": null"));
        }
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return FacadePending.forUse(call, comm);
        }
        try {
            DataType type = DataType.fromCode(datatype);
            long address = NcclFacade.address(scalar);
            PreMulSum op;
            if (residence == FlexNccl.ncclScalarHostImmediate) {
                op = host(c, address, type);
            } else if (residence == FlexNccl.ncclScalarDevice) {
                op = c.comm.createPreMulSumOnDevice(address, type);
            } else {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "residence: " + residence
                        + " is neither ncclScalarDevice (0) nor ncclScalarHostImmediate (1)");
            }
            int code = c.ops.add(op);
            if (out instanceof int[] a) {
                a[0] = code;
            } else if (out instanceof IntBuffer b) {
                b.put(b.position(), code);
            } else {
                ((IntPointer) out).put(code);
            }
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call, e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call, e);
        }
    }

    /** NCCL reads a host scalar at creation as one element of the type: so does this, exactly. */
    private static PreMulSum host(FacadeComm c, long address, DataType type) {
        long bits;
        switch (type.size()) {
            case 1: bits = UNSAFE.getByte(address); break;
            case 2: bits = UNSAFE.getShort(address); break;
            case 4: bits = UNSAFE.getInt(address); break;
            default: bits = UNSAFE.getLong(address);
        }
        if (!type.isFloatingPoint()) {
            return c.comm.createPreMulSum(bits, type); // its low bits, whatever the sign extension
        }
        long raw = type.size() == 8 ? bits : bits & ((1L << (8 * type.size())) - 1);
        return c.comm.createPreMulSum(FloatFormats.toDouble(type, raw), type); // every finite value exactly
    }

    static int destroy(int op, ncclComm comm) {
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return FacadePending.forUse("ncclRedOpDestroy", comm);
        }
        try {
            c.ops.destroy(op);
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclRedOpDestroy", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclRedOpDestroy", e);
        }
    }
}
