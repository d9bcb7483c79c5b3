package io.flexlink.runtime;

import io.flexlink.Buffer;

/** Device memory owned by FlexLink: one allocation, freed by an idempotent {@link #close()}. */
public interface DeviceMemory extends Buffer, AutoCloseable {
    @Override
    void close();
}
