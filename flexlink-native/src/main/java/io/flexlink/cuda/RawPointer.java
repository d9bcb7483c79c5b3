package io.flexlink.cuda;

import org.bytedeco.javacpp.Pointer;

/**
 * A {@link Pointer} whose address is set in place, so that hot paths pass raw device addresses to
 * bytedeco functions without creating a Pointer per call. Position stays 0. Not thread-safe: each owner
 * (a stream, a communicator) keeps its own and uses it from one thread at a time.
 */
final class RawPointer extends Pointer {
    RawPointer() {
    }

    RawPointer set(long a) {
        address = a;
        return this;
    }
}
