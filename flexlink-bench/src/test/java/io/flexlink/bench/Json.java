package io.flexlink.bench;

import com.google.gson.Gson;

/** The tests' JSON reader: objects as maps, arrays as lists, numbers as doubles (Gson's untyped view). */
final class Json {
    private Json() {
    }

    static Object parse(String text) {
        return new Gson().fromJson(text, Object.class);
    }
}
