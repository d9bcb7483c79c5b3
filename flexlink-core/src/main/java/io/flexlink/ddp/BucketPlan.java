package io.flexlink.ddp;

import io.flexlink.DataType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Which parameters go into which bucket, in which order the buckets launch, and which buckets can reduce
 * the gradients where they lie. Pure logic: no device work.
 *
 * <p>Parameters are taken in the order their gradients are expected to become ready (the reverse of model
 * order at first, since backward runs from the last layer; after a rebuild, the order observed in the first
 * step). Each element type has its own open bucket (an AllReduce carries one type); a bucket closes once
 * its bytes reach the cap, the first bucket of each type at the smaller first cap, so that the first
 * AllReduce starts early in backward. Buckets launch in the order in which they are expected to complete
 * (the position of their last parameter), and every rank launches them in this order whatever order its
 * gradients actually arrive in: that is what keeps the ranks' collectives matched.
 *
 * <p>Inside a bucket the gradients lie in model order, on every rank: element {@code i} of one rank's
 * bucket must be element {@code i} of every other rank's, whether a rank reduces its gradients in place or
 * copies them into a flat buffer. A bucket is reduced in place where its gradients, in model order, are one
 * gap-free range (a model whose gradients are one flat buffer in model order, as frameworks allocate them).
 */
final class BucketPlan {
    /** Parameter indices of each bucket, in the order the bucket holds them (model order). */
    final int[][] members;
    /** True where a bucket's gradients are one contiguous range of memory, reduced in place. */
    final boolean[] inPlace;
    /** Start address of each in-place bucket's range (0 for flat buckets). */
    final long[] base;
    /** Gradient bytes of each bucket. */
    final long[] bytes;
    /** Element type of each bucket. */
    final DataType[] type;
    /** Bucket of each parameter and its element offset inside that bucket's flat layout. */
    final int[] bucketOf;
    final long[] elementOffset;
    /** A hash of the assignment (parameters, counts, types and bucket boundaries in launch order). */
    final long hash;

    private BucketPlan(List<int[]> buckets, List<Parameter> params) {
        int n = buckets.size();
        members = buckets.toArray(new int[0][]);
        inPlace = new boolean[n];
        base = new long[n];
        bytes = new long[n];
        type = new DataType[n];
        bucketOf = new int[params.size()];
        elementOffset = new long[params.size()];
        Arrays.fill(bucketOf, -1);
        long h = Fnv.START;
        for (int b = 0; b < n; b++) {
            long offset = 0;
            h = Fnv.mix(h, -1 - b);
            for (int p : members[b]) {
                Parameter q = params.get(p);
                bucketOf[p] = b;
                elementOffset[p] = offset;
                offset += q.count();
                bytes[b] += q.bytes();
                h = Fnv.mix(Fnv.mix(Fnv.mix(h, p), q.count()), q.type().code());
            }
            type[b] = params.get(members[b][0]).type();
            base[b] = contiguousBase(members[b], params);
            inPlace[b] = base[b] != 0;
        }
        hash = h;
    }

    /**
     * Assigns every parameter of {@code params} to a bucket, taking them in {@code order} (a permutation of
     * the parameter indices).
     */
    static BucketPlan of(List<Parameter> params, int[] order, long firstCap, long cap) {
        Map<DataType, Open> open = new EnumMap<>(DataType.class);
        List<Open> closed = new ArrayList<>();
        for (int position = 0; position < order.length; position++) {
            Parameter p = params.get(order[position]);
            Open o = open.computeIfAbsent(p.type(), t -> new Open());
            o.add(p.index(), p.bytes(), position);
            if (o.bytes >= (o.closedBefore == 0 ? firstCap : cap)) {
                closed.add(o.copy());
                o.reset();
            }
        }
        for (Open o : open.values()) {
            if (!o.members.isEmpty()) {
                closed.add(o.copy());
            }
        }
        closed.sort(Comparator.comparingInt(o -> o.lastPosition));
        List<int[]> buckets = new ArrayList<>(closed.size());
        for (Open o : closed) {
            buckets.add(o.members.stream().mapToInt(Integer::intValue).sorted().toArray());
        }
        return new BucketPlan(buckets, params);
    }

    /** Reverse model order: backward produces the last layer's gradients first. */
    static int[] reverseOrder(int count) {
        int[] order = new int[count];
        for (int i = 0; i < count; i++) {
            order[i] = count - 1 - i;
        }
        return order;
    }

    int buckets() {
        return members.length;
    }

    /** The start of {@code ids}' gradients where they are one gap-free range in this order, or 0. */
    private static long contiguousBase(int[] ids, List<Parameter> params) {
        for (int i = 1; i < ids.length; i++) {
            Parameter before = params.get(ids[i - 1]);
            if (before.gradient().address() + before.bytes() != params.get(ids[i]).gradient().address()) {
                return 0;
            }
        }
        return params.get(ids[0]).gradient().address();
    }

    /** One type's bucket while it fills. */
    private static final class Open {
        final List<Integer> members = new ArrayList<>();
        long bytes;
        int lastPosition;
        int closedBefore;

        void add(int index, long b, int position) {
            members.add(index);
            bytes += b;
            lastPosition = position;
        }

        Open copy() {
            Open c = new Open();
            c.members.addAll(members);
            c.bytes = bytes;
            c.lastPosition = lastPosition;
            return c;
        }

        void reset() {
            members.clear();
            bytes = 0;
            closedBefore++;
        }
    }

    /** 64-bit FNV-1a over longs: the layout hash the ranks compare. */
    static final class Fnv {
        static final long START = 0xcbf29ce484222325L;
        private static final long PRIME = 0x100000001b3L;

        private Fnv() {
        }

        static long mix(long h, long v) {
            for (int i = 0; i < 8; i++) {
                h ^= (v >>> (8 * i)) & 0xFF;
                h *= PRIME;
            }
            return h;
        }
    }
}
