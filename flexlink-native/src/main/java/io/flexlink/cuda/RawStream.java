package io.flexlink.cuda;

import org.bytedeco.cuda.cudart.CUstream_st;

/** A {@link CUstream_st} over a raw {@code cudaStream_t} address (zero is the legacy default stream). */
final class RawStream extends CUstream_st {
    RawStream(long a) {
        address = a;
    }
}
