package io.flexlink.cuda;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads the {@code ConstantValue} attributes of a class file: the values of its compile-time constant
 * fields, without loading (let alone initializing) the class. bytedeco's {@code nccl} class loads
 * native libraries in its static initializer, and reading a static field reflectively initializes it.
 */
final class ClassFileConstants {
    private ClassFileConstants() {
    }

    static Map<String, Object> read(Class<?> anyInSameLoader, String className) throws IOException {
        String resource = "/" + className.replace('.', '/') + ".class";
        try (InputStream raw = anyInSameLoader.getResourceAsStream(resource)) {
            if (raw == null) {
                throw new IOException("not on the class path: " + resource);
            }
            return parse(new DataInputStream(raw));
        }
    }

    private static Map<String, Object> parse(DataInputStream in) throws IOException {
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int n = in.readUnsignedShort();
        Object[] pool = new Object[n];
        for (int i = 1; i < n; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1: pool[i] = in.readUTF(); break;
                case 3: pool[i] = in.readInt(); break;
                case 4: pool[i] = in.readFloat(); break;
                case 5: pool[i] = in.readLong(); i++; break;
                case 6: pool[i] = in.readDouble(); i++; break;
                case 7: case 8: case 16: case 19: case 20: pool[i] = new int[] {tag, in.readUnsignedShort()}; break;
                case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
                case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
                default: throw new IOException("constant pool tag " + tag);
            }
        }
        in.readUnsignedShort(); // access
        in.readUnsignedShort(); // this
        in.readUnsignedShort(); // super
        int interfaces = in.readUnsignedShort();
        for (int i = 0; i < interfaces; i++) {
            in.readUnsignedShort();
        }
        Map<String, Object> out = new HashMap<>();
        int fields = in.readUnsignedShort();
        for (int f = 0; f < fields; f++) {
            in.readUnsignedShort();
            String name = (String) pool[in.readUnsignedShort()];
            in.readUnsignedShort();
            int attrs = in.readUnsignedShort();
            for (int a = 0; a < attrs; a++) {
                String an = (String) pool[in.readUnsignedShort()];
                int len = in.readInt();
                if (an.equals("ConstantValue")) {
                    Object v = pool[in.readUnsignedShort()];
                    if (v instanceof int[]) { // a String constant: CONSTANT_String -> Utf8
                        v = pool[((int[]) v)[1]];
                    }
                    out.put(name, v);
                } else {
                    in.skipBytes(len);
                }
            }
        }
        return out;
    }
}
