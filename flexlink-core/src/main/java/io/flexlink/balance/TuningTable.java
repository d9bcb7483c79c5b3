package io.flexlink.balance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tuned shares per channel, persisted per topology fingerprint so that a restart skips tuning. One text
 * file per fingerprint: a header naming the format, the fingerprint and the library version, one line
 * per channel ({@code all_reduce/64M 0.2512} or {@code all_reduce/64K primary}), and a CRC-32 of the
 * lines above. A file that is stale (other fingerprint or version) or corrupt is ignored with a warning.
 */
public final class TuningTable {
    private static final Logger LOG = LoggerFactory.getLogger(TuningTable.class);
    private static final String FORMAT = "flexlink-tuning 1";

    /** Channel label → auxiliary shares, or null for primary only. */
    private final Map<String, double[]> entries = new TreeMap<>();

    public synchronized void put(String channel, double[] shares) {
        entries.put(channel, shares == null ? null : shares.clone());
    }

    /** True when the channel is in the table; {@link #get} then gives its shares (null: primary only). */
    public synchronized boolean contains(String channel) {
        return entries.containsKey(channel);
    }

    public synchronized double[] get(String channel) {
        double[] s = entries.get(channel);
        return s == null ? null : s.clone();
    }

    public synchronized int size() {
        return entries.size();
    }

    public synchronized Map<String, double[]> entries() {
        return Collections.unmodifiableMap(new TreeMap<>(entries));
    }

    /** The file of {@code fingerprint} under {@code dir}. */
    public static Path file(Path dir, String fingerprint) {
        return dir.resolve("tuning-" + fingerprint.substring(0, Math.min(32, fingerprint.length())) + ".txt");
    }

    /** Serialized form (also what ranks exchange). */
    public synchronized String serialize(String fingerprint, String version) {
        StringBuilder body = new StringBuilder();
        body.append(FORMAT).append(' ').append(fingerprint).append(' ').append(version).append('\n');
        for (Map.Entry<String, double[]> e : entries.entrySet()) {
            body.append(e.getKey());
            if (e.getValue() == null) {
                body.append(" primary");
            } else {
                for (double v : e.getValue()) {
                    body.append(' ').append(String.format(Locale.ROOT, "%.4f", v));
                }
            }
            body.append('\n');
        }
        CRC32 crc = new CRC32();
        crc.update(body.toString().getBytes(StandardCharsets.UTF_8));
        return body + "crc32 " + Long.toHexString(crc.getValue()) + "\n";
    }

    /** Parses {@link #serialize} output; null (with a warning) when stale or corrupt. */
    public static TuningTable parse(String text, String fingerprint, String version, int auxPaths, String source) {
        int end = text.lastIndexOf("crc32 ");
        if (end < 0) {
            LOG.warn("BALANCE tuning cache {} ignored: no checksum (corrupt)", source);
            return null;
        }
        String body = text.substring(0, end);
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        if (!text.substring(end + 6).trim().equals(Long.toHexString(crc.getValue()))) {
            LOG.warn("BALANCE tuning cache {} ignored: checksum mismatch (corrupt)", source);
            return null;
        }
        String[] lines = body.split("\n");
        if (!lines[0].equals(FORMAT + " " + fingerprint + " " + version)) {
            LOG.warn("BALANCE tuning cache {} ignored: stale (made for another topology or version)", source);
            return null;
        }
        TuningTable t = new TuningTable();
        try {
            for (int i = 1; i < lines.length; i++) {
                String[] f = lines[i].trim().split(" ");
                if (f.length == 2 && f[1].equals("primary")) {
                    t.put(f[0], null);
                } else if (f.length == auxPaths + 1) {
                    double[] s = new double[auxPaths];
                    for (int k = 0; k < auxPaths; k++) {
                        s[k] = Double.parseDouble(f[k + 1]);
                        if (!(s[k] >= 0 && s[k] <= 1)) {
                            throw new NumberFormatException("share out of range: " + f[k + 1]);
                        }
                    }
                    t.put(f[0], s);
                } else {
                    throw new NumberFormatException("bad line '" + lines[i] + "'");
                }
            }
        } catch (NumberFormatException e) {
            LOG.warn("BALANCE tuning cache {} ignored: {} (corrupt)", source, e.getMessage());
            return null;
        }
        return t;
    }

    /** Loads the table of {@code fingerprint} from {@code dir}; an empty table when absent, stale or corrupt. */
    public static TuningTable load(Path dir, String fingerprint, String version, int auxPaths) {
        if (dir == null) {
            return new TuningTable();
        }
        Path f = file(dir, fingerprint);
        if (!Files.exists(f)) {
            return new TuningTable();
        }
        try {
            TuningTable t = parse(Files.readString(f, StandardCharsets.UTF_8), fingerprint, version, auxPaths,
                    f.toString());
            if (t != null) {
                LOG.info("BALANCE tuning cache {}: {} channels restored", f, t.size());
                return t;
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("BALANCE tuning cache {} ignored: {}", f, e.toString());
        }
        return new TuningTable();
    }

    /** Writes the table atomically (temp file, then rename); failures are logged, never thrown. */
    public void save(Path dir, String fingerprint, String version) {
        if (dir == null) {
            return;
        }
        try {
            Files.createDirectories(dir);
            Path f = file(dir, fingerprint);
            Path tmp = Files.createTempFile(dir, "tuning", ".tmp");
            Files.writeString(tmp, serialize(fingerprint, version), StandardCharsets.UTF_8);
            Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            LOG.debug("BALANCE tuning cache {} written ({} channels)", f, size());
        } catch (IOException | RuntimeException e) {
            LOG.warn("BALANCE tuning cache not written under {}: {}", dir, e.toString());
        }
    }

    /** Lines of the table, for logs and stats. */
    public synchronized List<String> describe() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, double[]> e : entries.entrySet()) {
            out.add(e.getKey() + " " + (e.getValue() == null ? "primary" : java.util.Arrays.toString(e.getValue())));
        }
        return out;
    }
}
