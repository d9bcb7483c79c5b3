package io.flexlink.ddp;

import io.flexlink.ReduceOp;

/**
 * What a set of gradient buckets was built with; every rank must use the same values (they are part of
 * what the ranks agree on before the first launch).
 *
 * @param op        SUM or AVG across ranks
 * @param scale     factor applied to every reduced gradient (1: none)
 * @param firstCap  cap in bytes of each type's first bucket
 * @param cap       cap in bytes of the later buckets
 * @param findUnused treat parameters never marked ready in a step as zero gradients (else an error)
 * @param rebuild   rebuild the buckets once, from the order of the first step's ready calls
 * @param cast      carries FLOAT32 gradients in a narrower type, or null
 */
record DdpOptions(ReduceOp op, double scale, long firstCap, long cap, boolean findUnused, boolean rebuild,
                  GradientCast cast) {
    /** A hash of every value that changes what goes over the wire, compared between the ranks. */
    long hash() {
        long h = BucketPlan.Fnv.START;
        h = BucketPlan.Fnv.mix(h, op.code());
        h = BucketPlan.Fnv.mix(h, Double.doubleToLongBits(scale));
        h = BucketPlan.Fnv.mix(h, firstCap);
        h = BucketPlan.Fnv.mix(h, cap);
        h = BucketPlan.Fnv.mix(h, (findUnused ? 1 : 0) | (rebuild ? 2 : 0));
        return BucketPlan.Fnv.mix(h, cast == null ? -1 : cast.wireType().code());
    }
}
