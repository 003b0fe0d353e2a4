package tripwire.mongo;

import java.nio.ByteBuffer;

import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * Documents as BSON bytes, the library's own wire encoding (so they read back as exactly the values
 * a client sent), kept encoded in MVStore's pages and page cache and decoded only when a command
 * reads that one document ({@link #decode}): a page read from the file then costs a copy of its
 * bytes rather than decoding all its documents, the cache holds about three times as many
 * documents, and every read gets a document of its own, which the library may change in place.
 * Documents that earlier versions of this server Java-serialised are still read (BSON ones start
 * with a tag that encoding never uses) and are written back as BSON.
 */
final class BsonDocumentType extends BasicDataType<byte[]> {

    private static final byte BSON = -1;

    private final ObjectDataType javaSerialised = new ObjectDataType();

    static byte[] encode(Document document) {
        ByteBuf bson = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, bson);
            return ByteBufUtil.getBytes(bson);
        } finally {
            bson.release();
        }
    }

    static Document decode(byte[] bson) {
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(bson));
    }

    @Override
    public int getMemory(byte[] bson) {
        return 24 + bson.length;
    }

    @Override
    public void write(WriteBuffer buffer, byte[] bson) {
        buffer.put(BSON).put(bson);
    }

    @Override
    public byte[] read(ByteBuffer buffer) {
        if (buffer.get(buffer.position()) != BSON) {
            return encode((Document) javaSerialised.read(buffer));
        }
        buffer.get();
        // A BSON document starts with its own length, little-endian.
        int at = buffer.position();
        int length = (buffer.get(at) & 0xff) | (buffer.get(at + 1) & 0xff) << 8
            | (buffer.get(at + 2) & 0xff) << 16 | (buffer.get(at + 3) & 0xff) << 24;
        byte[] bson = new byte[length];
        buffer.get(bson);
        return bson;
    }

    @Override
    public byte[][] createStorage(int size) {
        return new byte[size][];
    }
}
