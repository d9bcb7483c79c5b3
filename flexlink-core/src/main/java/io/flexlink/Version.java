package io.flexlink;

/** The library's version, in one place below everything that reports it (the tuning cache keys on it). */
public final class Version {
    /** The library version. */
    public static final String VERSION = "0.1.0";

    private Version() {
    }
}
