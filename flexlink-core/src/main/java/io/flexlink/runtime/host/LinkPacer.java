package io.flexlink.runtime.host;

/** Paces the transfers of one stream like a link of fixed speed (link emulation on the host backend). */
@FunctionalInterface
interface LinkPacer {
    /** Called after {@code bytes} arrived over the link; may block to keep the link's rate. */
    void transferred(long bytes) throws InterruptedException;
}
