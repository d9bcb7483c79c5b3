package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What {@link FlexLinkConfig#conclude()} does: parses every setting from its text, then checks the
 * settings that depend on each other, and reports every problem at once, each with the setting's property
 * and variable (the secret's text is never echoed).
 */
final class SettingResolution {
    private SettingResolution() {
    }

    /** Every setting's value by {@link Setting#index}; INVALID_ARGUMENT listing each bad setting. */
    static Object[] resolve(List<Setting<?>> all, Function<Setting<?>, String> raw) {
        Object[] values = new Object[all.size()];
        List<String> problems = new ArrayList<>();
        for (Setting<?> s : all) {
            String text = raw.apply(s);
            try {
                values[s.index] = s.parse(text);
            } catch (RuntimeException e) {
                String why = e instanceof FlexLinkException ? ((FlexLinkException) e).detail() : e.toString();
                problems.add(name(s) + ": cannot use '" + (s == FlexLinkConfig.SECRET ? "<hidden>" : text) + "': "
                        + why);
            }
        }
        Object paths = values[FlexLinkConfig.PATHS.index];
        Object shares = values[FlexLinkConfig.SHARE.index];
        if (paths instanceof List && shares instanceof Map) {
            for (Object path : ((Map<?, ?>) shares).keySet()) {
                if (!((List<?>) paths).contains(path)) {
                    problems.add(name(FlexLinkConfig.SHARE) + ": gives a share to path '" + path + "', which "
                            + FlexLinkConfig.PATHS.property() + " (" + String.join(",", (List<String>) paths)
                            + ") does not enable");
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "configuration: " + String.join("; ", problems));
        }
        return values;
    }

    private static String name(Setting<?> s) {
        return s.property() + " (" + s.env() + ")";
    }
}
