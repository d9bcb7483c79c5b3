package io.flexlink.bench;

import java.util.ArrayDeque;
import java.util.Deque;

/** A minimal streaming JSON writer (objects, arrays, strings, numbers, booleans, null), indented. */
final class JsonWriter {
    private final StringBuilder sb = new StringBuilder();
    /** Per open container: true once it has an element. */
    private final Deque<boolean[]> open = new ArrayDeque<>();
    private boolean afterKey;

    JsonWriter beginObject() {
        raw("{");
        open.push(new boolean[1]);
        return this;
    }

    JsonWriter endObject() {
        return close('}');
    }

    JsonWriter beginArray() {
        raw("[");
        open.push(new boolean[1]);
        return this;
    }

    JsonWriter endArray() {
        return close(']');
    }

    private JsonWriter close(char c) {
        boolean[] had = open.pop();
        if (had[0]) {
            newline();
        }
        sb.append(c);
        return this;
    }

    JsonWriter key(String name) {
        separate();
        string(name);
        sb.append(": ");
        afterKey = true;
        return this;
    }

    JsonWriter value(String s) {
        if (s == null) {
            return raw("null");
        }
        separateUnlessKey();
        string(s);
        return this;
    }

    JsonWriter value(long v) {
        return raw(Long.toString(v));
    }

    JsonWriter value(double v) {
        return raw(Double.isFinite(v) ? Double.toString(v) : "null");
    }

    JsonWriter value(boolean v) {
        return raw(Boolean.toString(v));
    }

    JsonWriter nullValue() {
        return raw("null");
    }

    JsonWriter field(String name, String v) {
        return key(name).value(v);
    }

    JsonWriter field(String name, long v) {
        return key(name).value(v);
    }

    JsonWriter field(String name, double v) {
        return key(name).value(v);
    }

    JsonWriter field(String name, boolean v) {
        return key(name).value(v);
    }

    private JsonWriter raw(String token) {
        separateUnlessKey();
        sb.append(token);
        return this;
    }

    private void separateUnlessKey() {
        if (afterKey) {
            afterKey = false;
            return;
        }
        separate();
    }

    private void separate() {
        boolean[] had = open.peek();
        if (had == null) {
            return;
        }
        if (had[0]) {
            sb.append(',');
        }
        had[0] = true;
        newline();
    }

    private void newline() {
        sb.append('\n');
        for (int i = 0; i < open.size(); i++) {
            sb.append("  ");
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
