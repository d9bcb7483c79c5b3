package io.flexlink.path;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Every auxiliary path FlexLink knows, in one table: the built-in PCIe path, then those found through
 * {@link ServiceLoader} (the NVSHMEM path of flexlink-native). A communicator is built from this table
 * alone; no path is special-cased by name anywhere else.
 */
public final class PathRegistry {
    private static volatile List<PathProvider> all;

    private PathRegistry() {
    }

    /** The providers, built-in first; loaded once. */
    public static List<PathProvider> providers() {
        List<PathProvider> p = all;
        if (p == null) {
            List<PathProvider> list = new ArrayList<>();
            list.add(new PciePathProvider());
            for (PathProvider sp : ServiceLoader.load(PathProvider.class, PathRegistry.class.getClassLoader())) {
                list.add(sp);
            }
            p = Collections.unmodifiableList(list);
            all = p;
        }
        return p;
    }

    /** The provider of the path named {@code name}, or null when none is on the class path. */
    public static PathProvider find(String name) {
        for (PathProvider p : providers()) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        return null;
    }
}
