package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Where a configuration's values come from, in order: explicit overrides, the Java system property, the
 * environment variable, the default. Immutable: {@link #with} makes a copy.
 */
final class SettingSources {
    private final Map<Setting<?>, String> overrides;
    private final Function<String, String> env;

    SettingSources(Map<Setting<?>, String> overrides, Function<String, String> env) {
        this.overrides = new LinkedHashMap<>(overrides);
        this.env = env;
    }

    /** A null setting or value is INVALID_ARGUMENT, naming which. */
    static void check(Setting<?> setting, String value) {
        if (setting == null || value == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "configuration: "
                    + (setting == null ? "setting: null" : setting.property() + ": value null"));
        }
    }

    /** These sources with {@code setting} overridden by {@code value}. */
    SettingSources with(Setting<?> setting, String value) {
        check(setting, value);
        Map<Setting<?>, String> o = new LinkedHashMap<>(overrides);
        o.put(setting, value);
        return new SettingSources(o, env);
    }

    /** The text of {@code setting} as found (override, property, environment or default), unparsed. */
    String raw(Setting<?> setting) {
        if (setting == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "configuration: setting: null");
        }
        String v = overrides.get(setting);
        if (v == null) {
            v = System.getProperty(setting.property());
        }
        if (v == null) {
            v = env.apply(setting.env());
        }
        return v == null ? setting.defaultValue() : v;
    }
}
