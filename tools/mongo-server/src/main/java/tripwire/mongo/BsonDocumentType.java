package tripwire.mongo;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;

import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Documents stored as BSON, the library's own wire encoding (so they read back as exactly the
 * values a client sent). MVStore's default Java-serialises them, which took about three times the
 * space and most of the time of a read that missed the page cache. Documents written that way by
 * earlier versions of this server are still read: BSON ones start with a tag that encoding never
 * uses.
 */
final class BsonDocumentType extends BasicDataType<Document> {

    private static final byte BSON = -1;

    private final ObjectDataType javaSerialised = new ObjectDataType();

    /** The heap a decoded document takes, roughly: what bounds the page cache, in the heap's terms. */
    @Override
    public int getMemory(Document document) {
        return memory(document);
    }

    private static int memory(Object value) {
        if (value instanceof Map<?, ?> map) {
            int bytes = 64;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                bytes += 48 + memory(entry.getKey()) + memory(entry.getValue());
            }
            return bytes;
        }
        if (value instanceof Collection<?> values) {
            int bytes = 48;
            for (Object item : values) {
                bytes += 8 + memory(item);
            }
            return bytes;
        }
        if (value instanceof String text) {
            return 48 + text.length();
        }
        return 24;
    }

    @Override
    public void write(WriteBuffer buffer, Document document) {
        ByteBuf bson = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, bson);
            buffer.put(BSON);
            buffer.put(bson.nioBuffer());
        } finally {
            bson.release();
        }
    }

    @Override
    public Document read(ByteBuffer buffer) {
        if (buffer.get(buffer.position()) != BSON) {
            return (Document) javaSerialised.read(buffer);
        }
        buffer.get();
        ByteBuf bson = Unpooled.wrappedBuffer(buffer.slice());
        Document document = BsonDecoder.decodeBson(bson);
        buffer.position(buffer.position() + bson.readerIndex());
        return document;
    }

    @Override
    public Document[] createStorage(int size) {
        return new Document[size];
    }
}
