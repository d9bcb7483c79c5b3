package io.flexlink.config;

/** Renders docs/configuration.md from {@link FlexLinkConfig}; a test keeps the committed file equal to it. */
public final class ConfigDoc {
    private ConfigDoc() {
    }

    /** The whole page. */
    public static String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Configuration\n\n")
                .append("Every setting of FlexLink, generated from `io.flexlink.config.FlexLinkConfig` ")
                .append("(`java -cp flexlink-core.jar io.flexlink.config.ConfigDoc > docs/configuration.md`).\n")
                .append("A value comes from, first found wins: an override in code ")
                .append("(`FlexLinkConfig.builder().set(...)`), the Java system property, the environment ")
                .append("variable, the default.\n")
                .append("A configuration is resolved and checked as a whole, once, when a backend or a communicator is ")
                .append("made (`FlexLinkConfig.conclude()`): a bad value fails there with INVALID_ARGUMENT naming the ")
                .append("setting and its variable, never later inside a call.\n")
                .append("Every rank of a communicator must use the same values for the settings that shape the ")
                .append("split (paths, shares, chunk, slots, minimum split size): creation fails with ")
                .append("INVALID_USAGE otherwise.\n\n")
                .append("| environment variable | system property | default | meaning |\n")
                .append("|---|---|---|---|\n");
        for (Setting<?> s : FlexLinkConfig.settings()) {
            sb.append("| `").append(s.env()).append("` | `").append(s.property()).append("` | `")
                    .append(s.defaultValue()).append("` | ").append(s.doc().replace("|", "\\|")).append(" |\n");
        }
        return sb.toString();
    }

    public static void main(String[] args) {
        System.out.print(markdown());
    }
}
