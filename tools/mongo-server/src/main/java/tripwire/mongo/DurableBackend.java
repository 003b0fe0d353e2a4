package tripwire.mongo;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

/**
 * The H2 backend with what the service relies on and the library leaves out:
 * <ul>
 * <li>a write is in the redo log's file before it is acknowledged, so a killed server keeps it
 * (unless sent with `j: false`), and one sent with `j: true` or `w: "majority"` is committed to the
 * store and synced to disk too (see {@link GroupCommit});
 * `serverStatus` counts the syncs (`tripwireStore.syncs`) and the memory of the pages changed since
 * the last commit (`tripwireStore.unsavedBytes`);</li>
 * <li>an insert with duplicate keys reports how many documents went in (the library reports all
 * of them, while its per-document errors are right);</li>
 * <li>the `tripwireScans` command lists queries that no index served (see {@link ScanLog}), and
 * `top` counts the commands on each collection as mongod does (see {@link CommandTop});</li>
 * <li>an aggregation that opens with `$match` reads through the indexes (see
 * {@link IndexedCollection#LEADING_MATCH}), and one that sorts every document its source gives
 * fails past the sort's budget rather than run the heap out ({@link IndexedCollection#SORTED_SOURCE}).</li>
 * </ul>
 */
final class DurableBackend extends H2Backend {

    private final MVStore store;
    private final GroupCommit commits;
    private final Map<Channel, String> appNames = new ConcurrentHashMap<>();
    private final CommandTop top = new CommandTop();

    DurableBackend(MVStore store, GroupCommit commits) {
        super(store);
        this.store = store;
        this.commits = commits;
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedDatabase(databaseName, getCursorRegistry());
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        if (command.equals("tripwireScans")) {
            return scans(query);
        }
        if (command.equals("top")) {
            return top.answer();
        }
        long started = System.nanoTime();
        rememberAppName(channel, command, query);
        ScanLog.CALLER.set(appNames.get(channel));
        if (command.equals("aggregate") && query.get("pipeline") instanceof List<?> pipeline) {
            if (!pipeline.isEmpty() && pipeline.get(0) instanceof Document first
                && first.get("$match") instanceof Document match) {
                IndexedCollection.LEADING_MATCH.set(match);
            }
            if (sortsEverySourceDocument(pipeline)) {
                IndexedCollection.SORTED_SOURCE.set(true);
            }
        }
        // Pages this command reads stay on disk until it is done, however long it scans (the
        // store keeps no old versions otherwise, see Main).
        MVStore.TxCounter reading = store.registerVersionUsage();
        boolean writes = !READS.contains(command.toLowerCase(Locale.ROOT)) || writesOut(query);
        Document response;
        try {
            response = writes
                ? commits.writing(() -> super.handleCommand(channel, databaseName, command, query), acknowledge(query))
                : super.handleCommand(channel, databaseName, command, query);
        } finally {
            store.deregisterVersionUsage(reading);
            ScanLog.CALLER.remove();
            IndexedCollection.LEADING_MATCH.remove();
            IndexedCollection.SORTED_SOURCE.remove();
            // Failed commands count too, as mongod's do.
            top.count(databaseName, command, query, started);
        }
        if (command.equals("insert")) {
            correctInsertedCount(query, response);
        }
        if (command.equalsIgnoreCase("fsync")) {
            commits.sync();
        }
        if (command.equalsIgnoreCase("serverStatus")) {
            response.put("tripwireStore", new Document("syncs", commits.syncs())
                .append("fileBytes", store.getFileStore().size())
                .append("fileFillPercent", store.getFillRate())
                .append("chunksFillPercent", store.getFileStore().getChunksFillRate())
                .append("cacheMB", store.getCacheSize())
                .append("cacheUsedMB", store.getCacheSizeUsed())
                .append("unsavedBytes", store.getUnsavedMemory()));
        }
        return response;
    }

    /**
     * Commands that change nothing, so they run beside write commands rather than one at a time
     * with them, and never wait for a commit or a compaction pass.
     */
    private static final Set<String> READS = Set.of("find", "getmore", "count", "distinct", "aggregate",
        "killcursors", "hello", "ismaster", "ping", "buildinfo", "serverstatus", "dbstats", "collstats",
        "listcollections", "listindexes", "listdatabases", "endsessions", "explain", "getparameter",
        "getcmdlineopts", "connectionstatus", "whatsmyuri", "getlog", "hostinfo");

    /** Stages after which fewer documents than the source gave go on (groups, a count, a limit). */
    private static final Set<String> REDUCING = Set.of("$group", "$bucket", "$bucketAuto", "$count",
        "$sortByCount", "$limit");

    /** Whether a `$sort` comes before any stage that reduces the documents. */
    private static boolean sortsEverySourceDocument(List<?> pipeline) {
        for (Object stage : pipeline) {
            if (stage instanceof Document document) {
                if (document.containsKey("$sort")) {
                    return true;
                }
                if (document.keySet().stream().anyMatch(REDUCING::contains)) {
                    return false;
                }
            }
        }
        return false;
    }

    /** An aggregation that ends in `$out` or `$merge` writes a collection. */
    private static boolean writesOut(Document query) {
        return query.get("pipeline") instanceof List<?> pipeline && pipeline.stream().anyMatch(stage ->
            stage instanceof Document document && (document.containsKey("$out") || document.containsKey("$merge")));
    }

    /**
     * The journal (`j: true`) or a majority is waited for ({@link GroupCommit.Acknowledge#SYNCED}).
     * A write that says `j: false` is answered once applied, and its frame of the redo log goes to
     * the file with the next one (a later write's) or with the store's next sync, as mongod answers
     * it from memory before its journal is written, so a killed server may lose it as mongod may:
     * the evidence store sends its records and leaves so, right before the journaled write that makes
     * them durable. Any other write is answered once its frame is in the file.
     */
    private static GroupCommit.Acknowledge acknowledge(Document query) {
        if (!(query.get("writeConcern") instanceof Document concern)) {
            return GroupCommit.Acknowledge.WRITTEN;
        }
        if (Utils.isTrue(concern.get("j")) || "majority".equals(concern.get("w"))) {
            return GroupCommit.Acknowledge.SYNCED;
        }
        return Boolean.FALSE.equals(concern.get("j")) ? GroupCommit.Acknowledge.APPLIED : GroupCommit.Acknowledge.WRITTEN;
    }

    /** The handshake names the client application (the driver's `appName`); the scan log uses it. */
    private void rememberAppName(Channel channel, String command, Document query) {
        if ((command.equalsIgnoreCase("hello") || command.equalsIgnoreCase("isMaster"))
            && query.get("client") instanceof Document client
            && client.get("application") instanceof Document application
            && application.get("name") instanceof String name) {
            appNames.put(channel, name);
        }
    }

    @Override
    public void close() {
        commits.close();
        super.close();
    }

    @Override
    public void handleClose(Channel channel) {
        appNames.remove(channel);
        super.handleClose(channel);
    }

    private static void correctInsertedCount(Document query, Document response) {
        if (!(response.get("writeErrors") instanceof List<?> errors) || errors.isEmpty()) {
            return;
        }
        int sent = ((List<?>) query.get("documents")).size();
        // Ordered inserts stop at the first error; unordered ones skip only the failed documents.
        int inserted = Utils.isTrue(query.get("ordered"))
            ? ((Number) ((Document) errors.get(0)).get("index")).intValue()
            : sent - errors.size();
        response.put("n", inserted);
    }

    private static Document scans(Document query) {
        Document response = new Document("scans", ScanLog.SHARED.entries());
        if (Utils.isTrue(query.get("clear"))) {
            ScanLog.SHARED.clear();
        }
        Utils.markOkay(response);
        return response;
    }
}
