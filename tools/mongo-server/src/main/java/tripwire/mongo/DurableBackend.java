package tripwire.mongo;

import java.util.List;
import java.util.Map;
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
 * <li>a write is on disk before it is acknowledged (the library commits once a second, so a
 * killed server forgot up to a second of acknowledged writes);</li>
 * <li>an insert with duplicate keys reports how many documents went in (the library reports all
 * of them, while its per-document errors are right);</li>
 * <li>the `tripwireScans` command lists queries that no index served (see {@link ScanLog});</li>
 * <li>an aggregation that opens with `$match` reads through the indexes (see
 * {@link IndexedCollection#LEADING_MATCH}).</li>
 * </ul>
 */
final class DurableBackend extends H2Backend {

    private final MVStore store;
    private final Map<Channel, String> appNames = new ConcurrentHashMap<>();

    DurableBackend(MVStore store) {
        super(store);
        this.store = store;
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
        rememberAppName(channel, command, query);
        ScanLog.CALLER.set(appNames.get(channel));
        if (command.equals("aggregate") && query.get("pipeline") instanceof List<?> pipeline
            && !pipeline.isEmpty() && pipeline.get(0) instanceof Document first
            && first.get("$match") instanceof Document match) {
            IndexedCollection.LEADING_MATCH.set(match);
        }
        try {
            Document response = super.handleCommand(channel, databaseName, command, query);
            if (command.equals("insert")) {
                correctInsertedCount(query, response);
            }
            return response;
        } finally {
            ScanLog.CALLER.remove();
            IndexedCollection.LEADING_MATCH.remove();
            if (store.hasUnsavedChanges()) {
                store.commit();
            }
        }
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
