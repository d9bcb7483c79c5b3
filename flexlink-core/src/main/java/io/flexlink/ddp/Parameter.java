package io.flexlink.ddp;

import io.flexlink.Buffer;
import io.flexlink.DataType;

/**
 * One registered parameter's gradient: its buffer on the rank's device, element count and type, and its
 * position in model order. Handed out by {@link GradientBuckets.Builder#register} and passed back to
 * {@link GradientBuckets#ready}; it belongs to the buckets that registered it.
 */
public final class Parameter {
    private final Object owner;
    private final int index;
    private final String name;
    private final Buffer gradient;
    private final long count;
    private final DataType type;

    Parameter(Object owner, int index, String name, Buffer gradient, long count, DataType type) {
        this.owner = owner;
        this.index = index;
        this.name = name;
        this.gradient = gradient;
        this.count = count;
        this.type = type;
    }

    /** Position in model order (registration order), from 0. */
    public int index() {
        return index;
    }

    /** The name given at registration (or {@code param<index>}), used in error messages. */
    public String name() {
        return name;
    }

    /** The gradient's memory (the first {@code count} elements are the gradient). */
    public Buffer gradient() {
        return gradient;
    }

    public long count() {
        return count;
    }

    public DataType type() {
        return type;
    }

    /** Bytes of the gradient. */
    public long bytes() {
        return count * type.size();
    }

    boolean ownedBy(Object o) {
        return owner == o;
    }

    @Override
    public String toString() {
        return "'" + name + "' (#" + index + ", " + count + " " + type + ")";
    }
}
