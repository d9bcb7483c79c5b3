package io.flexlink.ddp;

import io.flexlink.DataType;
import java.util.List;

/**
 * What one bucket holds, for logs and tests.
 *
 * @param index      launch position: bucket {@code i} is launched before bucket {@code i + 1} on every rank
 * @param parameters the names of its parameters, in the order the bucket holds them
 * @param bytes      bytes of its gradients
 * @param wireType   the type its AllReduce carries (the gradients' type, or the cast's)
 * @param inPlace    true when the gradients are one contiguous range reduced where they lie; false when they
 *                   are copied into a flat buffer of the bucket and back
 */
public record BucketView(int index, List<String> parameters, long bytes, DataType wireType, boolean inPlace) {
}
