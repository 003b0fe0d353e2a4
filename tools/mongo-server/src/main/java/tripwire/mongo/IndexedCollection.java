package tripwire.mongo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * A collection whose documents are an MVStore map from `_id` to BSON bytes (the same map and
 * layout as the library's H2 collection, see {@link BsonDocumentType}), and whose queries use the
 * index that serves them best: one whose order is the sort (so a limit stops early), then the one
 * that serves the most keys; the library itself uses an index only when a query names exactly its
 * keys. A query no index serves is a full scan of the store, batch by batch when unsorted ({@link
 * StoreWalk}), and written to the scan log.
 */
final class IndexedCollection extends AbstractSynchronizedMongoCollection<Object> {

    private static final String DATA_SIZE = "dataSize";

    private final MVMap<Object, byte[]> documents;
    private final MVMap<String, Object> meta;

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                      MVMap<Object, byte[]> documents, MVMap<String, Object> meta, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
        this.documents = documents;
        this.meta = meta;
        meta.putIfAbsent(DATA_SIZE, 0L);
        CacheWarmer.warm(documents.getStore(), documents);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document fieldSelector) {
        if (orderBy != null && orderBy.containsKey("$natural")) {
            return super.queryDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
        }
        if ("_id".equals(getIdField()) && (query.get("_id") instanceof String || query.get("_id") instanceof ObjectId)) {
            // The documents' map is keyed by `_id`, and these values are stored as sent: one lookup
            // instead of a walk of the `_id` index and then of the documents' map.
            Stream<Document> document = Stream.ofNullable(getDocument(query.get("_id")));
            return matchDocumentsFromStream(query, document, skip, limit, batchSize, null, fieldSelector);
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
        boolean unsorted = orderBy == null || orderBy.isEmpty();
        boolean batched = TAKING.get() == Taking.BATCHES;
        if (best == null) {
            if (!query.isEmpty() || !unsorted) {
                ScanLog.SHARED.record(getFullName(), query, orderBy);
            }
            if (batched && unsorted) {
                return batchByBatch(query, new StoreWalk<>(documents), skip, limit, batchSize, fieldSelector);
            }
            return matchDocuments(query, orderBy, skip, limit, batchSize, fieldSelector);
        }
        if (batched && (best.ordered() || unsorted)) {
            return batchByBatch(query, best.walk(), skip, limit, batchSize, fieldSelector);
        }
        Stream<Document> documents = best.positions().map(this::getDocument);
        if (best.ordered()) {
            // Already in the requested order: the stream stops once `limit` documents matched.
            return matchDocumentsFromStream(query, documents, skip, limit, batchSize, null, fieldSelector);
        }
        return matchDocumentsFromStream(documents, query, orderBy, skip, limit, batchSize, fieldSelector);
    }

    /** The first batch, and a cursor that reads the rest as it is asked for ({@link IndexCursor}). */
    private QueryResult batchByBatch(Document query, IndexCursor.Positions walk, int skip, int limit, int batchSize,
                                     Document fieldSelector) {
        IndexCursor cursor = new IndexCursor(cursorRegistry.generateCursorId(), walk, this::getDocument,
            document -> documentMatchesQuery(document, query), documents -> projected(documents, fieldSelector),
            skip, limit);
        List<Document> first = cursor.takeDocuments(batchSize > 0 ? batchSize : IndexCursor.FIRST_BATCH);
        if (cursor.isEmpty()) {
            return new QueryResult(first);
        }
        cursorRegistry.add(cursor);
        return new QueryResult(first, cursor);
    }

    /** The library's projection of `documents`. */
    private List<Document> projected(List<Document> documents, Document fieldSelector) {
        if (fieldSelector == null || fieldSelector.isEmpty()) {
            return documents;
        }
        return super.matchDocumentsFromStream(new Document(), documents.stream(), 0, 0, 0, null, fieldSelector)
            .collectDocuments();
    }

    /** A document of its own for each read: the library changes documents in place. */
    @Override
    protected Document getDocument(Object position) {
        byte[] bson = documents.get(position);
        return bson == null ? null : BsonDocumentType.decode(bson);
    }

    @Override
    protected Object addDocumentInternal(Document document) {
        Object id = getIdField() != null ? Utils.getSubdocumentValue(document, getIdField()) : UUID.randomUUID();
        byte[] bson = BsonDocumentType.encode(document);
        if (documents.putIfAbsent(Missing.ofNullable(id), bson) != null) {
            throw new IllegalStateException("a document with _id " + id + " is already in " + getFullName());
        }
        updateDataSize(bson.length);
        return id;
    }

    /**
     * The data size is counted here, from the bytes stored, rather than by the library, which
     * encodes each document once more to measure it (twice for an update: before and after).
     */
    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    @Override
    public void addDocument(Document document) {
        super.addDocument(document);
        IndexedDatabase.redo.betweenDocuments();
    }

    @Override
    protected void handleUpdate(Object position, Document oldDocument, Document newDocument) {
        byte[] bson = BsonDocumentType.encode(newDocument);
        byte[] old = documents.put(Missing.ofNullable(position), bson);
        updateDataSize(bson.length - (old == null ? 0 : old.length));
        IndexedDatabase.redo.betweenDocuments();
    }

    @Override
    protected void removeDocument(Object position) {
        byte[] removed = documents.remove(position);
        if (removed == null) {
            throw new NoSuchElementException("no document with _id " + position);
        }
        updateDataSize(-removed.length);
        IndexedDatabase.redo.betweenDocuments();
    }

    /**
     * How this thread's command takes a query's matches. The library decodes every match into one
     * list before it hands over the first, which a query over a large collection cannot hold in the
     * heap (an `updateMany`, a `deleteMany` or a `countDocuments` over 250,000 documents of 1 KB ran
     * out of a 256 MB heap, and the server with it).
     */
    private enum Taking {
        /** The library's list, every match at once: what a `findAndModify` takes its one from. */
        LIST,
        /**
         * A `find`'s: its first batch, and a cursor that reads the rest as the client asks for them
         * ({@link IndexCursor}), unless the find sorts in memory.
         */
        BATCHES,
        /**
         * One at a time, as they are asked for: by an aggregation's pipeline (its source and its
         * `$lookup`s), a `count` or a `distinct`, or by an update or a delete of one document,
         * which stops at the first.
         */
        STREAM,
        /**
         * By `_id`, for an update or a delete of many: every match's `_id` before any change, then each
         * document read again just before it is changed. Found first, so a document that a change
         * moves further along the index being walked is not found twice; changed in `_id` order,
         * the documents' order in the store, so a command committed partway (see {@link
         * RedoLog#betweenDocuments}) writes each page of them once rather than once per document.
         */
        IDS
    }

    private static final ThreadLocal<Taking> TAKING = ThreadLocal.withInitial(() -> Taking.LIST);

    private static <T> T taking(Taking taking, Supplier<T> command) {
        TAKING.set(taking);
        try {
            return command.get();
        } finally {
            TAKING.remove();
        }
    }

    /**
     * A `find` takes its matches batch by batch; a command that set its own way of taking them (an
     * aggregation's source, a `$lookup`, an update) keeps it.
     */
    @Override
    public QueryResult handleQuery(QueryParameters query) {
        if (TAKING.get() != Taking.LIST) {
            return super.handleQuery(query);
        }
        return taking(Taking.BATCHES, () -> super.handleQuery(query));
    }

    /** Every match, read as the stream is: an aggregation's source, a `$lookup`'s matches. */
    @Override
    public Stream<Document> handleQueryAsStream(Document query) {
        return taking(Taking.STREAM, () -> super.handleQueryAsStream(query));
    }

    @Override
    public int count(Document query, int skip, int limit) {
        return taking(Taking.STREAM, () -> super.count(query, skip, limit));
    }

    @Override
    public Document handleDistinct(Document query) {
        return taking(Taking.STREAM, () -> super.handleDistinct(query));
    }

    @Override
    public Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                    boolean isMulti, boolean isUpsert, Oplog oplog) {
        return taking(isMulti ? Taking.IDS : Taking.STREAM,
            () -> super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog));
    }

    @Override
    public int deleteDocuments(Document selector, int limit, Oplog oplog) {
        return taking(limit == 1 ? Taking.STREAM : Taking.IDS, () -> super.deleteDocuments(selector, limit, oplog));
    }

    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documentStream, int skip,
                                                   int limit, int batchSize, Comparator<Document> comparator,
                                                   Document fieldSelector) {
        if (comparator != null) {
            long keep = limit > 0 ? (long) skip + limit : 0;
            List<Document> sorted = sortedWithinBudget(
                documentStream.filter(document -> documentMatchesQuery(document, query)), comparator, keep);
            // Matched and in order already: the library only skips, limits and projects them.
            return super.matchDocumentsFromStream(new Document(), sorted.stream(), skip, limit, batchSize, null,
                fieldSelector);
        }
        Taking taking = TAKING.get();
        if (taking == Taking.LIST || taking == Taking.BATCHES || skip > 0 || (fieldSelector != null && !fieldSelector.isEmpty())
            || (taking == Taking.IDS && !"_id".equals(getIdField()))) {
            return super.matchDocumentsFromStream(query, documentStream, skip, limit, batchSize, comparator,
                fieldSelector);
        }
        Stream<Document> matches = documentStream.filter(document -> documentMatchesQuery(document, query));
        if (limit > 0) {
            matches = matches.limit(limit);
        }
        if (taking == Taking.STREAM) {
            return new QueryResult(matches::iterator);
        }
        List<Object> positions = matches.map(document -> Missing.ofNullable(document.get("_id")))
            .collect(Collectors.toCollection(ArrayList::new));
        positions.sort(documents.getKeyType()::compare);
        return new QueryResult(() -> positions.stream()
            .map(this::getDocument)
            .filter(Objects::nonNull)
            .iterator());
    }

    /**
     * A sort no index serves holds its matches in the heap beside the page cache: the first `keep`
     * of them in the sort's order when the find has a limit (0: every one), and at most this share
     * of the heap, counted at the collection's average document size. Past it the command fails
     * as MongoDB's does past its 100 MB, rather than running the heap out: at the smallest heap a
     * `find().sort().limit(5)` on an unindexed field over 200,000 documents of 1 KB took the server
     * down.
     */
    private static final int SORT_HEAP_DIVISOR = 64;

    private List<Document> sortedWithinBudget(Stream<Document> matches, Comparator<Document> comparator, long keep) {
        long most = sortableDocuments();
        // Ties keep the order the matches came in, as the library's stable sort kept them.
        Comparator<Ranked> order = Comparator.comparing(Ranked::document, comparator).thenComparingLong(Ranked::rank);
        PriorityQueue<Ranked> held = new PriorityQueue<>(order.reversed());
        Iterator<Document> each = matches.iterator();
        for (long rank = 0; each.hasNext(); rank++) {
            held.add(new Ranked(each.next(), rank));
            if (keep > 0 && held.size() > keep) {
                held.poll();
            }
            if (held.size() > most) {
                throw sortExceeded();
            }
        }
        return held.stream().sorted(order).map(Ranked::document).toList();
    }

    /** How many of this collection's documents, at their average size, a sort may hold. */
    private long sortableDocuments() {
        long average = ((Number) meta.get(DATA_SIZE)).longValue() / Math.max(1, documents.sizeAsLong());
        return sortBudget() / Math.max(1, average);
    }

    private static long sortBudget() {
        return Runtime.getRuntime().maxMemory() / SORT_HEAP_DIVISOR;
    }

    private static MongoServerError sortExceeded() {
        return new MongoServerError(292, "QueryExceededMemoryLimitNoDiskUseAllowed", "Sort exceeded memory limit of "
            + sortBudget() + " bytes, but did not opt in to external sorting: add an index that serves the sort, or a limit");
    }

    private record Ranked(Document document, long rank) {
    }

    @Override
    public int count() {
        return documents.size();
    }

    @Override
    protected Stream<DocumentWithPosition<Object>> streamAllDocumentsWithPosition() {
        return documents.entrySet().stream()
            .map(entry -> new DocumentWithPosition<>(BsonDocumentType.decode(entry.getValue()), entry.getKey()));
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document fieldSelector) {
        Stream<Document> all = isNaturalDescending(orderBy)
            ? streamAllDocumentsWithPosition()
                .sorted((a, b) -> ValueComparator.desc().compare(a.getPosition(), b.getPosition()))
                .map(DocumentWithPosition::getDocument)
            : documents.values().stream().map(BsonDocumentType::decode);
        return matchDocumentsFromStream(all, query, orderBy, skip, limit, batchSize, fieldSelector);
    }

    @Override
    protected synchronized void updateDataSize(int sizeDelta) {
        meta.put(DATA_SIZE, ((Number) meta.get(DATA_SIZE)).longValue() + sizeDelta);
    }

    @Override
    protected int getDataSize() {
        return ((Number) meta.get(DATA_SIZE)).intValue();
    }

    /**
     * The `$match` that opens the aggregation this thread is running, if any: its documents come
     * from the query path (and its indexes) instead of a read of the whole collection. The driver's
     * `countDocuments` is such an aggregation.
     */
    static final ThreadLocal<Document> LEADING_MATCH = new ThreadLocal<>();

    /**
     * Set while the aggregation this thread is running sorts every document its source gives (a
     * `$sort` before any stage that reduces them): the library's `$sort` holds them all, so the
     * source fails the command past the sort's budget (see {@link #SORT_HEAP_DIVISOR}).
     */
    static final ThreadLocal<Boolean> SORTED_SOURCE = new ThreadLocal<>();

    @Override
    public Stream<Document> queryAllAsStream() {
        Document match = LEADING_MATCH.get();
        boolean sorted = Boolean.TRUE.equals(SORTED_SOURCE.get());
        // Only the pipeline's own source, not a later stage's.
        LEADING_MATCH.remove();
        SORTED_SOURCE.remove();
        if (match == null) {
            ScanLog.SHARED.record(getFullName(), new Document("$aggregate", 1), null);
        }
        Stream<Document> source = handleQueryAsStream(match != null ? match : new Document());
        if (!sorted) {
            return source;
        }
        long most = sortableDocuments();
        long[] given = {0};
        return source.peek(document -> {
            if (++given[0] > most) {
                throw sortExceeded();
            }
        });
    }

    private static boolean better(OrderedIndex.Scan scan, OrderedIndex.Scan than) {
        if (scan.ordered() != than.ordered()) {
            return scan.ordered();
        }
        return scan.keysUsed() > than.keysUsed();
    }
}
