package tripwire.mongo;

import java.util.stream.Stream;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.Document;

/**
 * An H2 collection whose queries use the index that serves them best: one whose order is the sort
 * (so a limit stops early), then the one that serves the most keys; the library itself uses an
 * index only when a query names exactly its keys. A query no index serves is a full scan, answered
 * as before and written to the scan log.
 */
final class IndexedCollection extends H2Collection {

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                      MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap,
                      CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document fieldSelector) {
        if (orderBy != null && orderBy.containsKey("$natural")) {
            return super.queryDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
        }
        OrderedIndex.Scan best = null;
        for (Index<Object> index : getIndexes()) {
            if (index instanceof OrderedIndex ordered) {
                OrderedIndex.Scan scan = ordered.plan(query, orderBy);
                if (scan != null && (best == null || better(scan, best))) {
                    best = scan;
                }
            }
        }
        if (best == null) {
            if (!query.isEmpty() || (orderBy != null && !orderBy.isEmpty())) {
                ScanLog.SHARED.record(getFullName(), query, orderBy);
            }
            return matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
        }
        Stream<Document> documents = best.positions().map(this::getDocument);
        if (best.ordered()) {
            // Already in the requested order: the stream stops once `limit` documents matched.
            return matchDocumentsFromStream(query, documents, skip, limit, batchSize, null, fieldSelector);
        }
        return matchDocumentsFromStream(documents, query, orderBy, skip, limit, batchSize, fieldSelector);
    }

    /**
     * A copy: MVStore hands out the very object it keeps, and the library updates documents in
     * place, so an answer still being written (or a cursor's later batch) would show a newer
     * version, and two racing findAndModify calls could return the same count.
     */
    @Override
    protected Document getDocument(Object position) {
        Document document = super.getDocument(position);
        return document == null ? null : document.cloneDeeply();
    }

    /**
     * The `$match` that opens the aggregation this thread is running, if any: its documents come
     * from the query path (and its indexes) instead of a read of the whole collection. The driver's
     * `countDocuments` is such an aggregation.
     */
    static final ThreadLocal<Document> LEADING_MATCH = new ThreadLocal<>();

    @Override
    public Stream<Document> queryAllAsStream() {
        Document match = LEADING_MATCH.get();
        if (match != null) {
            LEADING_MATCH.remove(); // only the pipeline's own source, not a later stage's
            return handleQueryAsStream(match);
        }
        ScanLog.SHARED.record(getFullName(), new Document("$aggregate", 1), null);
        return super.queryAllAsStream();
    }

    private static boolean better(OrderedIndex.Scan scan, OrderedIndex.Scan than) {
        if (scan.ordered() != than.ordered()) {
            return scan.ordered();
        }
        return scan.keysUsed() > than.keysUsed();
    }
}
