package tripwire.mongo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;

/**
 * `java tripwire.mongo.Main --dbpath DIR --port N [--bind ADDRESS]`: a MongoDB-wire server for
 * development and tests, its data in DIR/data.mv.db. Prints "listening on HOST:PORT" when ready;
 * SIGTERM closes the store cleanly. How writes reach the disk: {@link GroupCommit}.
 */
public final class Main {

    static final int RETENTION_MS = 1000;
    /**
     * MVStore's page cache takes this share (%) of the heap (-Xmx), and {@link CacheWarmer} fills
     * it after open; data beyond it is read from the file (the OS's cache) and decoded at every
     * miss. Whoever starts the server sizes the heap from the data (tools/stack.ts); the rest of the
     * heap is for commands' own work.
     */
    static final int CACHE_PERCENT_OF_HEAP = 65;
    /**
     * At most this many keys per page, in every map and at every level of its tree. A commit writes
     * every page it changed whole, so fewer than MVStore's default 48. But MVStore splits a full
     * page in the middle, so keys added in order (`_id`s, and (account, seq) within an account)
     * leave pages half full: at 16 a million documents' trees were 6 and 7 levels deep (8 keys a
     * leaf, 9 children a node), and every level of both walks an indexed read makes (the index,
     * then the documents) is a page-cache lookup and a binary search in memory the CPU's caches no
     * longer hold. At 32 they are 5 levels deep and the same reads cost a third of the extra
     * server time at a million documents; 64 (4 levels) made no difference beyond the noise.
     */
    static final int KEYS_PER_PAGE = 32;

    /**
     * MongoDB 5.0 with its own wire version (13): the library's MONGO_5_0 reports 4.2's (8), which
     * the Node.js driver 7 refuses (it needs 4.4, wire version 9, or newer).
     */
    static final MongoVersion MONGO_5_0 = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(5, 0, 0);
        }

        @Override
        public int getWireVersion() {
            return 13;
        }
    };

    static int cacheMb() {
        return (int) Math.max(16, Runtime.getRuntime().maxMemory() / 100 * CACHE_PERCENT_OF_HEAP >> 20);
    }

    public static void main(String[] args) throws Exception {
        String dbPath = "data";
        String bind = "127.0.0.1";
        int port = 27017;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--dbpath" -> dbPath = args[i + 1];
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--bind" -> bind = args[i + 1];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path folder = Path.of(dbPath).toAbsolutePath();
        Files.createDirectories(folder);
        long started = System.nanoTime();
        MVStore store = new MVStore.Builder()
            .fileName(folder.resolve("data.mv.db").toString())
            .cacheSize(cacheMb())
            .keysPerPage(KEYS_PER_PAGE)
            // MVStore's own compaction rewrites up to megabytes per 16 ms once chunks are older than
            // the retention time; GroupCommit compacts at a bounded rate instead.
            .autoCompactFillRate(0)
            // Only GroupCommit commits, between commands: MVStore's own commits (on a timer, or
            // inline once a command's changes pass a size) could write half of a command.
            .autoCommitDisabled()
            .autoCommitBufferSize(0)
            .open();
        // Chunks no longer live are written over once older than this (MVStore's default, 45 s, kept
        // every chunk of a busy minute, hundreds of MB); every commit is synced within
        // GroupCommit.SYNC_EVERY_MS, so a chunk's replacement is on disk before the chunk is reused.
        store.setRetentionTime(RETENTION_MS);
        // Nothing reads old versions but a running command, which pins the one it reads, so a
        // chunk is free once no version in use needs it (MVStore keeps 5 unless told; H2 keeps 0).
        store.setVersionsToKeep(0);
        IndexedDatabase.store = store;
        RedoLog redo = new RedoLog(store, folder.resolve("data.redo"));
        IndexedDatabase.redo = redo;
        GroupCommit commits = new GroupCommit(store, redo);
        // Opens every collection and index, which the log's frames change.
        DurableBackend backend = new DurableBackend(store, commits);
        int replayed = commits.recover();
        backend.version(MONGO_5_0);
        MongoServer server = new MongoServer(backend);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            backend.close();
        }));
        server.bind(bind, port);
        System.out.printf("listening on %s:%d (opened %s in %d ms%s)%n", bind, port, folder,
            (System.nanoTime() - started) / 1_000_000,
            replayed > 0 ? ", " + replayed + " logged writes applied" : "");
    }
}
