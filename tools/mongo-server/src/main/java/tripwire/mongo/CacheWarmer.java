package tripwire.mongo;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * Reads each map's pages into MVStore's page cache in the background once it is opened, documents
 * first, until the cache is nearly full. The page cache is sized from the heap (see {@link Main}),
 * which tools/stack.ts sizes from the data; warmed, a read anywhere in a large collection costs
 * what it costs in a small one, instead of a page read and decode from the file for every read
 * until uniform reads have touched every page.
 */
final class CacheWarmer {

    /** Keys read per pinned version: a long walk does not keep old chunks from being reused. */
    private static final int KEYS_PER_STEP = 10_000;

    private static final ExecutorService THREAD = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "cache-warmer");
        thread.setDaemon(true);
        return thread;
    });

    private CacheWarmer() {
    }

    static <K> void warm(MVStore store, MVMap<K, ?> map) {
        THREAD.execute(() -> {
            try {
                K from = null;
                while (!store.isClosed() && !map.isClosed() && !nearlyFull(store)) {
                    MVStore.TxCounter reading = store.registerVersionUsage();
                    try {
                        Cursor<K, ?> cursor = map.cursor(from);
                        for (int read = 0; read < KEYS_PER_STEP; read++) {
                            if (!cursor.hasNext()) {
                                return;
                            }
                            from = cursor.next();
                        }
                    } finally {
                        store.deregisterVersionUsage(reading);
                    }
                }
            } catch (RuntimeException e) {
                // A map dropped or a store closed while warming: nothing left to warm.
            }
        });
    }

    private static boolean nearlyFull(MVStore store) {
        return store.getCacheSizeUsed() >= store.getCacheSize() * 9 / 10;
    }
}
