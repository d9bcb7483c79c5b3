package io.flexlink.config;

import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * One setting: its property name ({@code flexlink.*}), its environment variable ({@code FLEXLINK_*}),
 * default, documentation and parser. All settings are declared in {@link FlexLinkConfig}.
 *
 * @param <T> the typed value
 */
public final class Setting<T> {
    private final String property;
    private final String env;
    private final String defaultValue;
    private final String doc;
    private final Function<String, T> parser;
    /** Position in {@link FlexLinkConfig#settings()}: where a resolved configuration keeps its value. */
    final int index;

    Setting(int index, String property, String defaultValue, String doc, Function<String, T> parser) {
        this.index = index;
        this.property = Objects.requireNonNull(property);
        this.env = "FLEXLINK_" + property.substring("flexlink.".length())
                .replaceAll("([a-z])([A-Z])", "$1_$2").replace('.', '_').toUpperCase(Locale.ROOT);
        this.defaultValue = defaultValue;
        this.doc = doc;
        this.parser = parser;
    }

    /** The Java system property, e.g. {@code flexlink.chunkBytes}. */
    public String property() {
        return property;
    }

    /** The environment variable, e.g. {@code FLEXLINK_CHUNK_BYTES}. */
    public String env() {
        return env;
    }

    /** The default as text. */
    public String defaultValue() {
        return defaultValue;
    }

    /** What the setting does. */
    public String doc() {
        return doc;
    }

    T parse(String text) {
        return parser.apply(text.trim());
    }

    @Override
    public String toString() {
        return property;
    }
}
