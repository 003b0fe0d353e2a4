package tripwire.mongo;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;

/**
 * MongoDB's `top` command: per collection, how many commands of each kind ran and how long they
 * took (microseconds, from arrival to answer, a journaled write's sync included), as mongod counts
 * them. A benchmark divides the counts by its operations to see the database round trips each one
 * makes.
 */
final class CommandTop {

    /** mongod's kinds; any other command naming a collection (count, aggregate, …) is `commands`. */
    private static final Map<String, String> KINDS = Map.of(
        "find", "queries",
        "getmore", "getmore",
        "insert", "insert",
        "update", "update",
        "delete", "remove");

    private record Counter(LongAdder count, LongAdder micros) {
        Counter() {
            this(new LongAdder(), new LongAdder());
        }

        void add(long micros) {
            count.increment();
            this.micros.add(micros);
        }

        Document toDocument() {
            return new Document("time", micros.sum()).append("count", count.sum());
        }
    }

    /** By namespace, then kind (`total` too). */
    private final Map<String, Map<String, Counter>> namespaces = new ConcurrentHashMap<>();

    /** Counts one command, if it names a collection (its first field's value; a getMore's `collection`). */
    void count(String databaseName, String command, Document query, long startedNanos) {
        Object named = command.equalsIgnoreCase("getMore") ? query.get("collection") : query.get(command);
        if (!(named instanceof String collection)) {
            return;
        }
        long micros = (System.nanoTime() - startedNanos) / 1_000;
        String kind = KINDS.getOrDefault(command.toLowerCase(Locale.ROOT), "commands");
        Map<String, Counter> kinds = namespaces.computeIfAbsent(databaseName + "." + collection,
            name -> new ConcurrentHashMap<>());
        kinds.computeIfAbsent("total", name -> new Counter()).add(micros);
        kinds.computeIfAbsent(kind, name -> new Counter()).add(micros);
    }

    /** The `top` command's answer: `{totals: {<db.collection>: {total, queries, …}}}`. */
    Document answer() {
        Document totals = new Document("note", "all times in microseconds");
        new TreeMap<>(namespaces).forEach((namespace, kinds) -> {
            Document counts = new Document();
            new TreeMap<>(kinds).forEach((kind, counter) -> counts.append(kind, counter.toDocument()));
            totals.append(namespace, counts);
        });
        Document response = new Document("totals", totals);
        Utils.markOkay(response);
        return response;
    }
}
