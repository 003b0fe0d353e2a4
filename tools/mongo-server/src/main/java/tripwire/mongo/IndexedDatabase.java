package tripwire.mongo;

import java.util.List;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.h2.H2Database;

/**
 * An H2 database whose indexes, `_id` included, are {@link OrderedIndex}es: the library's own unique
 * index stores its keys as Java-serialised objects, which MVStore compares by serialising both sides
 * at every step of every lookup (about 2 ms per insert or read in a 10,000-document collection).
 * Documents stay in the library's MVStore maps, by `_id`; each index is a map of its own beside them
 * (`<database>.<collection>._ordered_<index>`, or `._ordered_sparse_<index>`), which the library's
 * drop of a database also removes.
 */
final class IndexedDatabase extends H2Database {

    /**
     * The library opens collections from inside its own constructor, before a subclass could keep
     * the store in a field; one server runs per process, so the store is kept here.
     */
    static volatile MVStore store;
    /** Where the collections' maps log their changes (see {@link RedoLog}); set with the store. */
    static volatile RedoLog redo;

    IndexedDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, store, cursorRegistry);
    }

    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                    boolean sparse) {
        return openIndex(collectionName, indexName, keys, sparse, true);
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                       boolean sparse) {
        return openIndex(collectionName, indexName, keys, sparse, false);
    }

    /**
     * A sparse index's map has a name of its own: earlier servers left out every document whose key
     * lies in an array of subdocuments, so a map of theirs is dropped, and the index built again
     * from the documents when the collection opens.
     */
    private Index<Object> openIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse,
                                    boolean unique) {
        String prefix = getFullCollectionNamespace(collectionName) + "._ordered_";
        String mapName = prefix + indexName;
        if (sparse) {
            if (store.hasMap(mapName)) {
                store.removeMap(mapName);
            }
            mapName = prefix + "sparse_" + indexName;
        }
        return new OrderedIndex(store, mapName, indexName, keys, sparse, unique);
    }

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        // The same map names as H2Database, so data written by either stays readable.
        String fullName = getFullCollectionNamespace(collectionName);
        MVMap<Object, byte[]> documents = store.openMap("databases." + fullName,
            RedoLog.<Object, byte[]>loggedMap().keyType(new KeyCodec.IdType()).valueType(new BsonDocumentType()));
        MVMap<String, Object> meta = store.openMap("meta." + fullName, RedoLog.loggedMap());
        return new IndexedCollection(this, collectionName, options, documents, meta, cursorRegistry);
    }
}
