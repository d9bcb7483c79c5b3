package io.flexlink.cuda;

import java.util.ArrayList;
import java.util.List;

/**
 * A map from non-zero {@code long} keys to objects for lookups on hot paths: reads are lock-free and
 * allocate nothing (open addressing over primitive arrays, no boxing); writes copy the table under a
 * lock (they happen at init: new streams and communicators). Key 0 is reserved as "empty".
 */
final class LongObjectMap<V> {
    private static final class Table {
        final long[] keys;
        final Object[] values;
        final int size;

        Table(int capacity, int size) {
            keys = new long[capacity];
            values = new Object[capacity];
            this.size = size;
        }
    }

    private volatile Table table = new Table(16, 0);

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    @SuppressWarnings("unchecked")
    V get(long key) {
        Table t = table;
        int mask = t.keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = t.keys[i];
            if (k == key) {
                return (V) t.values[i];
            }
            if (k == 0) {
                return null;
            }
        }
    }

    /** Adds or replaces {@code key}; returns the previous value. */
    synchronized V put(long key, V value) {
        if (key == 0) {
            throw new IllegalArgumentException("key 0 is reserved");
        }
        V old = get(key);
        rebuild(key, value, old == null ? 1 : 0);
        return old;
    }

    /** Removes {@code key}; returns its value or null. */
    synchronized V remove(long key) {
        V old = get(key);
        if (old != null) {
            rebuild(key, null, -1);
        }
        return old;
    }

    int size() {
        return table.size;
    }

    /** A snapshot of the values. */
    @SuppressWarnings("unchecked")
    List<V> values() {
        Table t = table;
        List<V> out = new ArrayList<>(t.size);
        for (Object v : t.values) {
            if (v != null) {
                out.add((V) v);
            }
        }
        return out;
    }

    /** Copies the table with {@code key} set to {@code value} (null removes it). */
    private void rebuild(long key, V value, int delta) {
        Table old = table;
        int size = old.size + delta;
        int capacity = old.keys.length;
        while (size * 2 > capacity) {
            capacity *= 2;
        }
        Table t = new Table(capacity, size);
        for (int i = 0; i < old.keys.length; i++) {
            if (old.keys[i] != 0 && old.keys[i] != key) {
                insert(t, old.keys[i], old.values[i]);
            }
        }
        if (value != null) {
            insert(t, key, value);
        }
        table = t;
    }

    private static void insert(Table t, long key, Object value) {
        int mask = t.keys.length - 1;
        int i = slot(key, mask);
        while (t.keys[i] != 0) {
            i = (i + 1) & mask;
        }
        t.keys[i] = key;
        t.values[i] = value;
    }
}
