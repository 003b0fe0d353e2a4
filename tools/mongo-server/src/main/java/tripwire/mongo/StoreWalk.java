package tripwire.mongo;

import java.util.Iterator;

import org.h2.mvstore.MVMap;

/**
 * Every document's position in a collection, in the store's order (`_id`), for a find that no
 * index serves; like {@link OrderedIndex.Walk}, it holds only its place between commands.
 */
final class StoreWalk<K> extends IndexCursor.Positions {

    private final MVMap<K, ?> documents;
    private K last;
    private Iterator<K> current;

    StoreWalk(MVMap<K, ?> documents) {
        this.documents = documents;
    }

    @Override
    void resume() {
        current = null;
    }

    @Override
    Object advance() {
        if (current == null) {
            current = documents.keyIterator(last);
        }
        while (current.hasNext()) {
            K key = current.next();
            if (last != null && documents.getKeyType().compare(key, last) == 0) {
                continue; // where the previous command stopped: handed out already
            }
            last = key;
            return key;
        }
        return null;
    }
}
