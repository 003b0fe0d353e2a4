package tripwire.mongo;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * How keys are written, to the store's pages and to the redo log: index entries' values and
 * positions, and the documents' `_id`s. H2's {@link ObjectDataType}, the store's default for keys,
 * builds a new type handler each time the class of the value it writes differs from the last one's
 * (an index entry is a string, a number and an `_id`, in turn), writes a string as one varint per
 * character and Java-serialises the classes it does not know (ObjectIds, dates); every commit
 * writes each page a write changed whole, so that was most of the commit thread's time. Here the
 * common values are written as their bytes, and any other value, or a string that is not ASCII, by
 * {@link ObjectDataType} after a tag of its own.
 * <p>
 * What this class writes starts with {@link #TAG}, a byte {@link ObjectDataType} never writes first
 * (its type tags are 0 to 119), so keys in its form (stores written before this codec) are still
 * read, and written this way when their page is next.
 */
final class KeyCodec {

    static final byte TAG = -1;

    private static final byte NULL = 0;
    private static final byte FALSE = 1;
    private static final byte TRUE = 2;
    private static final byte INT = 3;
    private static final byte LONG = 4;
    private static final byte DOUBLE = 5;
    private static final byte ASCII = 6;
    private static final byte OBJECT_ID = 7;
    private static final byte INSTANT = 8;
    private static final byte OTHER = 9;

    private static final ObjectDataType OTHERS = new ObjectDataType();

    private KeyCodec() {
    }

    /** The documents' `_id`s: ordered as {@link ObjectDataType} orders them, written here. */
    static final class IdType extends ObjectDataType {

        @Override
        public void write(WriteBuffer buffer, Object id) {
            buffer.put(TAG);
            KeyCodec.write(buffer, id);
        }

        @Override
        public Object read(ByteBuffer buffer) {
            return tagged(buffer) ? KeyCodec.read(buffer) : super.read(buffer);
        }
    }

    /**
     * Whether `buffer`'s next key was written here rather than by {@link ObjectDataType}; if so, its
     * tag is read.
     */
    static boolean tagged(ByteBuffer buffer) {
        if (buffer.get(buffer.position()) != TAG) {
            return false;
        }
        buffer.get();
        return true;
    }

    static void write(WriteBuffer buffer, Object value) {
        if (value == null) {
            buffer.put(NULL);
        } else if (value instanceof String s) {
            if (isAscii(s)) {
                buffer.put(ASCII).putVarInt(s.length()).put(s.getBytes(StandardCharsets.ISO_8859_1));
            } else {
                other(buffer, value);
            }
        } else if (value instanceof Double d) {
            buffer.put(DOUBLE).putDouble(d);
        } else if (value instanceof Integer i) {
            buffer.put(INT).putInt(i);
        } else if (value instanceof Long l) {
            buffer.put(LONG).putLong(l);
        } else if (value instanceof Boolean b) {
            buffer.put(b ? TRUE : FALSE);
        } else if (value instanceof ObjectId id) {
            buffer.put(OBJECT_ID).put(id.toByteArray());
        } else if (value instanceof Instant t) {
            buffer.put(INSTANT).putLong(t.getEpochSecond()).putInt(t.getNano());
        } else {
            other(buffer, value);
        }
    }

    /**
     * What a value takes on the heap (the object and what it holds, aligned), as the page cache
     * counts it: MVStore keeps its cache within the sum of these estimates, so one below the truth
     * lets the cache outgrow the heap. A 64-character string takes 104 bytes, not a reference's 8.
     */
    static int memory(Object value) {
        if (value == null || value instanceof Boolean) {
            return 0; // shared instances
        } else if (value instanceof String s) {
            // The String (24 bytes) and its array (16, and a byte a character; two a character for
            // a string beyond ASCII, which over-counts the rest of Latin-1).
            return 40 + aligned(isAscii(s) ? s.length() : 2 * s.length());
        } else if (value instanceof Integer) {
            return 16;
        } else if (value instanceof Double || value instanceof Long || value instanceof Instant) {
            return 24;
        } else if (value instanceof ObjectId) {
            return 48;
        }
        return OTHERS.getMemory(value);
    }

    private static int aligned(int bytes) {
        return (bytes + 7) & ~7;
    }

    static Object read(ByteBuffer buffer) {
        byte tag = buffer.get();
        return switch (tag) {
            case NULL -> null;
            case FALSE -> Boolean.FALSE;
            case TRUE -> Boolean.TRUE;
            case INT -> buffer.getInt();
            case LONG -> buffer.getLong();
            case DOUBLE -> buffer.getDouble();
            case ASCII -> {
                byte[] bytes = new byte[DataUtils.readVarInt(buffer)];
                buffer.get(bytes);
                yield new String(bytes, StandardCharsets.ISO_8859_1);
            }
            case OBJECT_ID -> {
                byte[] bytes = new byte[12];
                buffer.get(bytes);
                yield new ObjectId(bytes);
            }
            case INSTANT -> Instant.ofEpochSecond(buffer.getLong(), buffer.getInt());
            case OTHER -> OTHERS.read(buffer);
            default -> throw new IllegalStateException("unknown key tag " + tag);
        };
    }

    private static void other(WriteBuffer buffer, Object value) {
        buffer.put(OTHER);
        OTHERS.write(buffer, value);
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }
}
