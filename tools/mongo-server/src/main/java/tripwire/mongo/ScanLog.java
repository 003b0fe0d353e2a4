package tripwire.mongo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;

/**
 * The shapes of queries that no index served (values replaced by 1), by the application name the
 * client gave when it connected, with how often each ran. The service's test suite reads it through
 * the `tripwireScans` command and fails on any query the service itself sent: that is how "every
 * query is covered by an index" is checked against the real queries.
 */
final class ScanLog {

    /** One server runs per process; collections are created inside library constructors. */
    static final ScanLog SHARED = new ScanLog();

    /** The application name of the client whose command this thread is running. */
    static final ThreadLocal<String> CALLER = new ThreadLocal<>();

    private record Key(String app, String query) {
    }

    private final Map<Key, Long> counts = new LinkedHashMap<>();

    synchronized void record(String collection, Document query, Document orderBy) {
        if (collection.contains(".system.")) {
            return;
        }
        String sort = orderBy == null || orderBy.isEmpty() ? "" : " sort " + orderBy;
        String app = CALLER.get() == null ? "" : CALLER.get();
        counts.merge(new Key(app, collection + " " + shape(query) + sort), 1L, Long::sum);
    }

    synchronized List<Document> entries() {
        List<Document> result = new ArrayList<>();
        counts.forEach((key, count) -> result.add(
            new Document("app", key.app()).append("query", key.query()).append("count", count)));
        return result;
    }

    synchronized void clear() {
        counts.clear();
    }

    private static Object shape(Object value) {
        if (value instanceof Document document) {
            Document result = new Document();
            document.forEach((key, inner) -> result.append(key, shape(inner)));
            return result;
        }
        if (value instanceof List<?> list) {
            return list.isEmpty() ? List.of() : List.of(shape(list.get(0)));
        }
        return 1;
    }
}
