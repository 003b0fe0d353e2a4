package tripwire.mongo;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.DuplicateKeyError;

/**
 * A secondary index (unique or not, single or compound, ascending or descending keys) kept as an
 * ordered map of (key values, document position) in the store next to the documents, so it is
 * committed with them and opening the store does not rebuild it. mongo-java-server itself serves only exact lookups on unique indexes and ignores
 * the others; this index answers equality on a key prefix, a range on the next key, `$in` lists,
 * and hands out positions in index order so a sort + limit stops after `limit` documents.
 */
final class OrderedIndex extends Index<Object> {

    private static final ValueComparator VALUES = ValueComparator.asc();
    private static final Set<String> RANGE_OPERATORS = Set.of("$gt", "$gte", "$lt", "$lte");
    /** More `$in` combinations than this are cheaper to scan than to look up one by one. */
    private static final int MAX_LOOKUPS = 10_000;

    /** What {@link #plainValue} answers when only the library's own walk of a document can say. */
    private static final Object NOT_PLAIN = new Object();

    private final MVStore store;
    private final boolean unique;
    private final boolean[] ascending;
    /** The keys' names, and each one's path, split once (the library splits it for every document). */
    private final List<String> names;
    private final String[][] paths;
    private final MVMap<Entry, Boolean> entries;
    /** An index found in the store is complete, even if empty (sparse): the library must not rebuild it. */
    private final boolean persisted;
    /** The document the last uniqueness check passed, and the index as it was then. */
    private Document checked;
    private Object checkedRoot;

    /** Key values and the document's position; `edge` is -1 or +1 only in range bounds. */
    private record Entry(Object[] values, Object position, int edge) {
    }

    /** How one query is answered: key ranges in index order, and whether their order is the sort. */
    record Scan(OrderedIndex index, List<Entry[]> ranges, int keysUsed, Boolean forward) {

        boolean ordered() {
            return forward != null;
        }

        /** Positions in index order (reversed when the sort runs against it), each once. */
        Stream<Object> positions() {
            Walk walk = walk();
            return Stream.generate(walk::next).takeWhile(Objects::nonNull);
        }

        Walk walk() {
            return new Walk(index, ranges, Boolean.FALSE.equals(forward));
        }
    }

    /**
     * A scan's positions, each once, that can stop between commands: each command's part starts
     * after the entry last handed out, at the store's version of that moment. So a cursor's later
     * batches hold only their place in the index, never an old version of the store (which keeps
     * none, see Main), and see the index as a later command left it, as MongoDB's cursors do.
     */
    static final class Walk extends IndexCursor.Positions {
        private final OrderedIndex index;
        private final List<Entry[]> ranges;
        private final boolean reverse;
        /**
         * Positions handed out: a document with an array in the index has an entry per element,
         * within one range or across several.
         */
        private final Set<Object> seen = new HashSet<>();
        private int range;
        private Entry last;
        private Iterator<Entry> current;

        private Walk(OrderedIndex index, List<Entry[]> ranges, boolean reverse) {
            this.index = index;
            this.ranges = ranges;
            this.reverse = reverse;
        }

        @Override
        void resume() {
            current = null;
        }

        @Override
        Object advance() {
            while (range < ranges.size()) {
                if (current == null) {
                    Entry[] bounds = ranges.get(range);
                    Entry from = last != null ? last : reverse ? bounds[1] : bounds[0];
                    current = index.entries.cursor(from, reverse ? bounds[0] : bounds[1], reverse);
                }
                while (current.hasNext()) {
                    Entry entry = current.next();
                    if (last != null && index.compare(entry, last) == 0) {
                        continue; // where the previous command stopped: handed out already
                    }
                    last = entry;
                    if (seen.add(entry.position())) {
                        return entry.position();
                    }
                }
                range++;
                last = null;
                current = null;
            }
            return null;
        }
    }

    OrderedIndex(MVStore store, String mapName, String name, List<IndexKey> keys, boolean sparse, boolean unique) {
        super(name, keys, sparse);
        this.store = store;
        this.unique = unique;
        this.ascending = new boolean[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            ascending[i] = keys.get(i).isAscending();
        }
        this.names = List.copyOf(keys());
        this.paths = names.stream().map(key -> key.split("\\.")).toArray(String[][]::new);
        this.persisted = store.hasMap(mapName);
        this.entries = store.openMap(mapName, RedoLog.<Entry, Boolean>loggedMap().keyType(new EntryType()));
        CacheWarmer.warm(store, entries);
    }

    /**
     * Entries on disk: how many key values, each value, then the position ({@link KeyCodec});
     * entries in H2's own object form (one array) are read too.
     */
    private final class EntryType extends BasicDataType<Entry> {
        private final ObjectDataType objects = new ObjectDataType();

        @Override
        public int compare(Entry a, Entry b) {
            return OrderedIndex.this.compare(a, b);
        }

        /** The entry, its array of values, each value and the position (see {@link KeyCodec#memory}). */
        @Override
        public int getMemory(Entry entry) {
            int memory = 24 + 16 + 8 * entry.values.length + KeyCodec.memory(entry.position);
            for (Object value : entry.values) {
                memory += KeyCodec.memory(value);
            }
            return memory;
        }

        @Override
        public void write(WriteBuffer buffer, Entry entry) {
            buffer.put(KeyCodec.TAG).putVarInt(entry.values.length);
            for (Object value : entry.values) {
                KeyCodec.write(buffer, value);
            }
            KeyCodec.write(buffer, entry.position);
        }

        @Override
        public Entry read(ByteBuffer buffer) {
            if (!KeyCodec.tagged(buffer)) {
                Object[] all = (Object[]) objects.read(buffer);
                return new Entry(Arrays.copyOf(all, all.length - 1), all[all.length - 1], 0);
            }
            Object[] values = new Object[DataUtils.readVarInt(buffer)];
            for (int i = 0; i < values.length; i++) {
                values[i] = KeyCodec.read(buffer);
            }
            return new Entry(values, KeyCodec.read(buffer), 0);
        }

        @Override
        public Entry[] createStorage(int size) {
            return new Entry[size];
        }
    }

    /**
     * The library's order, with the common same-type cases first: its comparator looks up each
     * value's type rank and widens numbers on every call, which was a third of the server's time
     * on inserts (every insert walks each index's tree twice, to check and to add).
     */
    private static int compareValues(Object a, Object b) {
        if (a instanceof String x && b instanceof String y) {
            return x.compareTo(y);
        }
        if (a instanceof Integer x && b instanceof Integer y) {
            return Integer.compare(x, y);
        }
        if (a instanceof Long x && b instanceof Long y) {
            return Long.compare(x, y);
        }
        if (a instanceof Double x && b instanceof Double y && !x.isNaN() && !y.isNaN()) {
            // Keys hold numbers normalised to doubles (whole ones compared as longs by the
            // library, which orders them the same, -0.0 equal to 0.0 included).
            double p = x;
            double q = y;
            return p < q ? -1 : p > q ? 1 : 0;
        }
        return VALUES.compare(a, b);
    }

    private int compare(Entry a, Entry b) {
        int shared = Math.min(a.values.length, b.values.length);
        for (int i = 0; i < shared; i++) {
            int c = compareValues(a.values[i], b.values[i]);
            if (c != 0) {
                return ascending[i] ? c : -c;
            }
        }
        if (a.values.length != b.values.length) {
            // The shorter one is a bound on a key prefix: below or above everything it prefixes.
            return a.values.length < b.values.length ? a.edge : -b.edge;
        }
        if (a.edge != 0 || b.edge != 0) {
            return Integer.compare(a.edge, b.edge);
        }
        return compareValues(a.position, b.position);
    }

    // ---- keeping the index in step with the collection ----

    private static Object positionOf(Document document) {
        return Missing.ofNullable(Utils.getSubdocumentValue(document, "_id"));
    }

    /**
     * The document's entries' key values, as the library's {@link #getKeyValues} gives them
     * (numbers as doubles, absent values as null). A document with a plain value at every key (no
     * array, no subdocument) has one entry, read here; the library's reading (streams, maps and a
     * regex split of every path, for every document) was a quarter of an insert's time. Any other
     * document is read by the library.
     */
    private List<Object[]> keysOf(Document document) {
        Object[] values = new Object[paths.length];
        for (int i = 0; i < paths.length; i++) {
            values[i] = plainValue(document, paths[i]);
            if (values[i] == NOT_PLAIN) {
                return libraryKeysOf(document);
            }
        }
        return List.<Object[]>of(values);
    }

    private List<Object[]> libraryKeysOf(Document document) {
        List<Object[]> result = new ArrayList<>();
        for (KeyValue keyValue : getKeyValues(document)) {
            Object[] values = new Object[keyValue.size()];
            for (int i = 0; i < values.length; i++) {
                Object value = keyValue.get(i);
                values[i] = value instanceof Missing ? null : value;
            }
            result.add(values);
        }
        return result;
    }

    /**
     * The value at `path`, normalised as the library normalises key values, or {@link #NOT_PLAIN}
     * for an array on the way or at the end, or a subdocument at the end. A path through a plain
     * value or an absent field holds nothing (null), as in the library's walk.
     */
    private static Object plainValue(Document document, String[] path) {
        Object node = document;
        for (String field : path) {
            if (node instanceof Document parent) {
                node = parent.get(field);
            } else if (node instanceof Collection) {
                return NOT_PLAIN;
            } else {
                return null;
            }
        }
        if (node instanceof Collection || node instanceof Map) {
            return NOT_PLAIN;
        }
        // Strings, the usual key, are their own normal form.
        return node instanceof String ? node : normalized(node);
    }

    /**
     * Whether a sparse index leaves the document out: none of its keys is there, in a subdocument
     * or in any document of an array on the way (the library looked past arrays, so an array of
     * subdocuments, such as evidence's `personal`, had no entries and its queries found nothing).
     */
    private boolean skips(Document document) {
        if (!isSparse()) {
            return false;
        }
        for (int i = 0; i < paths.length; i++) {
            Object value = plainValue(document, paths[i]);
            if (value == NOT_PLAIN) {
                value = Utils.getSubdocumentValueCollectionAware(document, names.get(i));
            }
            boolean absent = value instanceof Collection<?> values
                ? values.stream().allMatch(Missing::isNullOrMissing)
                : Missing.isNullOrMissing(value);
            if (!absent) {
                return false;
            }
        }
        return true;
    }

    @Override
    public Object getPosition(Document document) {
        return positionOf(document);
    }

    @Override
    public synchronized void checkAdd(Document document, MongoCollection<Object> collection) {
        checkUnique(document, null, collection);
        checked = document;
        checkedRoot = entries.getRootPage();
    }

    @Override
    public synchronized void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Object> collection) {
        // Keys left as they were (every update of a document's other fields, and always `_id`'s)
        // cannot collide: the document's own entry holds them.
        if (!sameKeys(oldDocument, newDocument)) {
            checkUnique(newDocument, positionOf(oldDocument), collection);
        }
    }

    private void checkUnique(Document document, Object ownPosition, MongoCollection<Object> collection) {
        if (!unique || skips(document)) {
            return;
        }
        for (Object[] values : keysOf(document)) {
            Iterable<Entry> taken = () -> entries.cursor(new Entry(values, null, -1), new Entry(values, null, 1), false);
            for (Entry entry : taken) {
                if (ownPosition == null || !ownPosition.equals(entry.position)) {
                    throw new DuplicateKeyError(this, collection, getKeys(), new KeyValue(values));
                }
            }
        }
    }

    @Override
    public synchronized void add(Document document, Object position, MongoCollection<Object> collection) {
        // The library checks every index before it adds the document to any: checked once, unless
        // the index changed since (an index being built checks its documents before the first goes in).
        if (document != checked || entries.getRootPage() != checkedRoot) {
            checkAdd(document, collection);
        }
        checked = null;
        if (skips(document)) {
            return;
        }
        for (Object[] values : keysOf(document)) {
            entries.put(new Entry(values, position, 0), Boolean.TRUE);
        }
    }

    @Override
    public synchronized Object remove(Document document) {
        Object position = positionOf(document);
        for (Object[] values : keysOf(document)) {
            entries.remove(new Entry(values, position, 0));
        }
        return position;
    }

    @Override
    public synchronized void updateInPlace(Document oldDocument, Document newDocument, Object position,
                                           MongoCollection<Object> collection) {
        // An update that leaves this index's keys as they were (most `$inc`s and `$set`s) leaves its
        // pages alone: a commit writes every page it touched, whole.
        if (!sameKeys(oldDocument, newDocument)) {
            remove(oldDocument);
            add(newDocument, position, collection);
        }
    }

    private boolean sameKeys(Document oldDocument, Document newDocument) {
        return skips(oldDocument) == skips(newDocument)
            && Arrays.deepEquals(keysOf(oldDocument).toArray(), keysOf(newDocument).toArray());
    }

    @Override
    public long getCount() {
        return entries.sizeAsLong();
    }

    @Override
    public boolean isEmpty() {
        return !persisted && entries.isEmpty();
    }

    @Override
    public long getDataSize() {
        return getCount() * 64;
    }

    @Override
    public synchronized void drop() {
        store.removeMap(entries);
    }

    @Override
    public boolean isUnique() {
        return unique;
    }

    @Override
    public boolean hasSameOptions(Index<?> other) {
        return super.hasSameOptions(other) && other.isUnique() == unique;
    }

    // ---- answering queries ----

    @Override
    public boolean canHandle(Document query) {
        return plan(query, null) != null;
    }

    @Override
    public Iterable<Object> getPositions(Document query) {
        return plan(query, null).positions()::iterator;
    }

    /**
     * How this index answers `query` sorted by `orderBy` (null: any order), or null when it cannot:
     * equality (or `$in`) on the first keys, then optionally a range on the next one. `forward` is
     * set when walking the index (forwards or backwards) yields the requested order.
     */
    Scan plan(Document query, Document orderBy) {
        List<List<Object>> choices = new ArrayList<>();
        int k = 0;
        while (k < names.size() && query.containsKey(names.get(k))) {
            List<Object> values = equalityValues(query.get(names.get(k)));
            if (values == null) {
                break;
            }
            choices.add(values);
            k++;
        }
        Document range = k < names.size() ? rangeOf(query.get(names.get(k))) : null;
        if (k == 0 && range == null) {
            // No condition on the first key: only an unfiltered read in this index's order (the
            // newest leaf, the latest checkpoint) walks it, stopping at the limit.
            Boolean walk = query.isEmpty() && orderBy != null && !orderBy.isEmpty() ? direction(orderBy, 0) : null;
            if (walk == null) {
                return null;
            }
            Entry[] all = {new Entry(new Object[0], null, -1), new Entry(new Object[0], null, 1)};
            return new Scan(this, List.<Entry[]>of(all), 0, walk);
        }
        List<Object[]> prefixes = combinations(choices);
        if (prefixes == null) {
            return null;
        }
        List<Entry[]> ranges = new ArrayList<>();
        for (Object[] prefix : prefixes) {
            ranges.add(bounds(prefix, range, k));
        }
        Boolean forward = prefixes.size() == 1 ? direction(orderBy, k) : null;
        if (orderBy == null || orderBy.isEmpty()) {
            forward = Boolean.TRUE;
        }
        return new Scan(this, ranges, k + (range == null ? 0 : 1), forward);
    }

    private static boolean plain(Object value) {
        return !(value instanceof Document) && !(value instanceof Collection) && !(value instanceof Pattern);
    }

    private static Object normalized(Object value) {
        Object normal = new KeyValue(value).normalized().get(0);
        return normal instanceof Missing ? null : normal;
    }

    /** The values an equality condition allows (`v`, `{$eq: v}`, `{$in: [...]}`), else null. */
    private static List<Object> equalityValues(Object condition) {
        if (plain(condition)) {
            return List.of(Missing.ofNullable(normalized(condition)));
        }
        if (!(condition instanceof Document document) || document.size() != 1) {
            return null;
        }
        if (document.containsKey("$eq") && plain(document.get("$eq"))) {
            return List.of(Missing.ofNullable(normalized(document.get("$eq"))));
        }
        if (document.get("$in") instanceof Collection<?> values && values.stream().allMatch(OrderedIndex::plain)) {
            List<Object> result = new ArrayList<>();
            values.forEach(value -> result.add(Missing.ofNullable(normalized(value))));
            return result;
        }
        return null;
    }

    /** A condition made only of `$gt`, `$gte`, `$lt`, `$lte` on plain values, else null. */
    private static Document rangeOf(Object condition) {
        if (!(condition instanceof Document document) || document.isEmpty()) {
            return null;
        }
        for (String operator : document.keySet()) {
            if (!RANGE_OPERATORS.contains(operator) || !plain(document.get(operator)) || document.get(operator) == null) {
                return null;
            }
        }
        return document;
    }

    private static List<Object[]> combinations(List<List<Object>> choices) {
        List<Object[]> result = new ArrayList<>();
        result.add(new Object[0]);
        for (List<Object> values : choices) {
            List<Object[]> next = new ArrayList<>();
            for (Object[] prefix : result) {
                for (Object value : values) {
                    Object[] longer = Arrays.copyOf(prefix, prefix.length + 1);
                    longer[prefix.length] = value instanceof Missing ? null : value;
                    next.add(longer);
                }
            }
            if (next.size() > MAX_LOOKUPS) {
                return null;
            }
            result = next;
        }
        return result;
    }

    /** Lower and upper bounds, in index order, of the entries under `prefix` within `range`. */
    private Entry[] bounds(Object[] prefix, Document range, int key) {
        Entry lower = new Entry(prefix, null, -1);
        Entry upper = new Entry(prefix, null, 1);
        if (range == null) {
            return new Entry[] {lower, upper};
        }
        boolean asc = ascending[key];
        for (String operator : range.keySet()) {
            Object[] values = Arrays.copyOf(prefix, prefix.length + 1);
            values[prefix.length] = normalized(range.get(operator));
            boolean above = operator.startsWith("$gt");
            boolean inclusive = operator.endsWith("e");
            // Values above v come after v in an ascending key and before it in a descending one.
            if (above == asc) {
                lower = new Entry(values, null, inclusive ? -1 : 1);
            } else {
                upper = new Entry(values, null, inclusive ? 1 : -1);
            }
        }
        return new Entry[] {lower, upper};
    }

    /** TRUE or FALSE when walking the keys after the `equal` prefix gives `orderBy`, else null. */
    private Boolean direction(Document orderBy, int equal) {
        if (orderBy == null || orderBy.isEmpty()) {
            return Boolean.TRUE;
        }
        Boolean forward = null;
        int next = equal;
        for (String field : orderBy.keySet()) {
            if (!(orderBy.get(field) instanceof Number order)) {
                return null;
            }
            if (names.subList(0, equal).contains(field)) {
                continue; // sorting on a key fixed by equality changes nothing
            }
            if (next >= names.size() || !names.get(next).equals(field)) {
                return null;
            }
            boolean same = (order.intValue() > 0) == ascending[next];
            if (forward != null && forward != same) {
                return null;
            }
            forward = same;
            next++;
        }
        return forward == null ? Boolean.TRUE : forward;
    }
}
