package tripwire.mongo;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.h2.mvstore.FileStore;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.RandomAccessStore;

/**
 * The one way writes reach the disk. A write command is answered once what it changed is in the
 * redo log's file ({@link RedoLog}), so a killed server keeps what it acknowledged (but for writes
 * sent with `j: false`, whose frame goes with the next, see {@link DurableBackend}). The log file
 * is synced every {@link #SYNC_EVERY_MS} while frames came, which bounds what a power loss can
 * take; the store is committed every {@link #COMMIT_EVERY_MS} while anything changed and synced
 * with it, and every commit (a compaction pass's too) is synced within {@link #SYNC_EVERY_MS},
 * which keeps every overwritten chunk's replacement on disk first (see {@link Main}). A write that
 * asks for `j: true` or `w: "majority"` is answered only after the log file is synced, and writers
 * waiting at once share one sync. A sync covers every write before it, acknowledged with `j` or
 * not, as MongoDB's journal does.
 * <p>
 * A commit never takes half a command, nor (one that commits partway, see {@link
 * RedoLog#betweenDocuments}) half a document: write commands run one at a time holding {@link
 * #writer}, and every commit here (the only ones but those: MVStore's own are off, see {@link
 * Main}) and every compaction pass hold it too. Otherwise a commit in the middle of an insert could write the
 * document without its index entries, which a killed server would then keep: the document
 * invisible to queries, and its `_id` refused to every later insert. Reads take no lock.
 */
final class GroupCommit {

    /** While frames come, the log file is synced this often (MongoDB's journal: every 100 ms). */
    static final int SYNC_EVERY_MS = 200;
    /**
     * While anything changed, the store is committed this often; the log holds the writes between.
     * A commit writes every page changed since the last one, whole, with the path to each map's
     * root, so the pages most writes change (the right end of an index, each map's upper levels)
     * are written once a commit whatever the writes. At one commit per {@link #SYNC_EVERY_MS},
     * committing took 44 % of the server's CPU under the alert path; once a second, an alert's
     * writes cost the server 0.82x the CPU (docs/benchmarks.md, `bench:embedded-server`).
     */
    static final int COMMIT_EVERY_MS = 1000;
    /**
     * The store is also committed once the pages changed since the last commit take this much
     * memory: after a write command, and within one between two documents ({@link
     * RedoLog#betweenDocuments}), so they never pass twice this. They stay in the heap beside the
     * full page cache until a commit, which serializes them all into one buffer; a second of bulk
     * inserts at the smallest heap changed 50 MB of pages, and that commit ran the heap out. The
     * service's own writes change under 1 MB a second (the alert path at 50 at a time), so only bulk
     * writes commit early.
     */
    static final int UNSAVED_BYTES = 4 << 20;
    /**
     * Compaction runs once a second while the live data fills less than this share (%) of the
     * chunks, or the chunks less than this share of the file. The file holds the live data over
     * the product of the two; at 75 each dipped to 55-60 % under the service's synced writes, and
     * the file to 3.3-3.6x its documents (the live store is about 1.6x their BSON).
     */
    static final int COMPACT_BELOW_PERCENT = 85;
    /** While writes come, at most this much is rewritten per second. */
    static final int COMPACT_BYTES = 2 << 20;
    /** Without writes, each pass may hold the store this long to rewrite, move and cut the file. */
    static final int QUIET_COMPACT_MS = 500;
    /**
     * Without writes, chunks are moved towards the start this much at a time: MVStore picks the
     * chunks between the largest holes first, so smaller moves (its own are 8 MB) left a file
     * filled to 45 % uncut after a bulk fill, while this cuts it to its chunks in seconds. A write
     * that comes meanwhile waits for the move it arrived in (about a second at most here).
     */
    static final long QUIET_MOVE_BYTES = 64L << 20;
    /**
     * Free space the file keeps rather than have chunks moved to cut it: the next writes fill it
     * again, and after each burst of alerts the moves that cut it (100-230 ms each on a 25-40 MB
     * file) were most of what compaction cost. Chunks are still rewritten to keep them full.
     */
    static final long SLACK_BYTES = 16L << 20;

    private final MVStore store;
    private final RedoLog log;
    /** How many quiet passes the store has had: each pass's first commit changes it (see compactFile). */
    private final MVMap<String, Long> passes;
    /**
     * Held by one write command, commit or compaction pass at a time (reads take none). Fair: a
     * commit waiting goes before commands that come after it.
     */
    private final ReentrantLock writer = new ReentrantLock(true);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "group-commit");
        thread.setDaemon(true);
        return thread;
    });
    /** Journaled writers wait here for the log's sync, one at a time. */
    private final Object journal = new Object();
    /** The store's version at the last sync: a later one (a compaction's commit) is not on disk yet. */
    private volatile long syncedVersion;
    /** When the store was last synced ({@link System#nanoTime}). */
    private long syncedAt = System.nanoTime();
    private final AtomicLong syncs = new AtomicLong();
    /** The store's version after the last compaction pass: unchanged means no writes since. */
    private long seenVersion = -1;
    /** Passes without writes in a row that may gain nothing before compaction waits for writes. */
    static final int QUIET_PASSES_WITHOUT_GAIN = 10;

    /**
     * The smallest file and the fullest chunks since writes stopped, and how many passes since
     * either last improved: rewriting a large file gains a percent only every few passes.
     */
    private long quietSize = Long.MAX_VALUE;
    private int quietFill = -1;
    private int passesWithoutGain;

    GroupCommit(MVStore store, RedoLog log) {
        this.store = store;
        this.log = log;
        this.passes = store.openMap("tripwire.compaction");
    }

    /** How long a write command's answer waits. */
    enum Acknowledge {
        /** `j: false`: until applied; its frame goes to the log file with the next one, or a sync. */
        APPLIED,
        /** No `j`: until its frame is in the log file, which a killed server keeps. */
        WRITTEN,
        /** `j: true` or `w: "majority"`: until the log file is synced too. */
        SYNCED
    }

    /**
     * Applies what the log holds beyond the store and syncs it, then starts the periodic sync and
     * compaction (whose syncs would otherwise start the log over before it was read).
     * @return how many logged commands were applied
     */
    int recover() {
        int applied;
        writer.lock();
        try {
            applied = log.recover();
            syncAlone();
        } finally {
            writer.unlock();
        }
        timer.scheduleWithFixedDelay(this::syncIfChanged, SYNC_EVERY_MS, SYNC_EVERY_MS, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::compact, 1, 1, TimeUnit.SECONDS);
        return applied;
    }

    /**
     * Runs a write command alone and logs what it changed ({@link RedoLog}), then waits as
     * `acknowledge` asks. A command that created or removed a map (a collection, an index) is
     * committed and synced instead, as the log can only replay changes to maps the store has.
     */
    <T> T writing(Supplier<T> command, Acknowledge acknowledge) {
        T result;
        long frame;
        writer.lock();
        try {
            log.begin();
            try {
                result = command.get();
            } finally {
                if (log.needsSync()) {
                    syncAlone();
                } else {
                    log.end(acknowledge != Acknowledge.APPLIED);
                    if (store.getUnsavedMemory() >= UNSAVED_BYTES) {
                        commitAlone();
                    }
                }
                frame = log.last();
            }
        } finally {
            writer.unlock();
        }
        if (acknowledge == Acknowledge.SYNCED) {
            syncLogThrough(frame);
        }
        return result;
    }

    /** Commits the store and syncs it to disk, with every change so far. */
    synchronized void sync() {
        if (store.isClosed()) {
            return;
        }
        writer.lock();
        try {
            syncAlone();
        } finally {
            writer.unlock();
        }
    }

    /** With {@link #writer} held, between commands. */
    private void commitAlone() {
        log.beforeCommit();
        store.commit();
    }

    /** With {@link #writer} held: the store on disk then holds every frame, so the log starts over. */
    private void syncAlone() {
        commitAlone();
        // After the background thread's own commit is written out, not only ours.
        store.executeFilestoreOperation(() -> store.getFileStore().sync());
        syncedVersion = store.getCurrentVersion();
        syncedAt = System.nanoTime();
        log.afterSync();
        syncs.incrementAndGet();
    }

    long syncs() {
        return syncs.get();
    }

    /**
     * The store synced once its last commit is not on disk yet (a compaction pass's) or its changes
     * are {@link #COMMIT_EVERY_MS} old; otherwise only the log file, with every frame so far.
     */
    private void syncIfChanged() {
        try {
            boolean due = System.nanoTime() - syncedAt >= COMMIT_EVERY_MS * 1_000_000L;
            if (store.getCurrentVersion() > syncedVersion || due && store.hasUnsavedChanges()) {
                sync();
            } else {
                syncLog();
            }
        } catch (RuntimeException e) {
            // A failing disk fails the next durable write too; the timer keeps trying.
            System.err.println("periodic sync failed: " + e);
        }
    }

    /** The log file synced with every frame so far, those of `j: false` writes too. */
    private void syncLog() {
        long frame;
        writer.lock();
        try {
            if (store.isClosed()) {
                return;
            }
            frame = log.flush();
        } finally {
            writer.unlock();
        }
        syncLogThrough(frame);
    }

    /** The log file synced through `frame`, unless a sync since covered it; outside {@link #writer}. */
    private void syncLogThrough(long frame) {
        synchronized (journal) {
            // Writers that waited here meanwhile are covered by the sync before them.
            if (log.syncThrough(frame)) {
                syncs.incrementAndGet();
            }
        }
    }

    /**
     * MVStore's own compaction either waits for chunks older than the retention time and then
     * rewrites megabytes every few milliseconds, or (at its default retention) reclaims nothing
     * while every write is a commit. This one rewrites the emptiest chunks at a bounded rate while
     * writes come (and moves as much towards the start, so the end of the file can be cut), and once
     * a second passes without any, compacts the whole file (MVStore's `compactFile`: rewrite, move
     * chunks together, cut the end) until passes stop cutting the file or filling the chunks further.
     */
    private synchronized void compact() {
        // Its rewrites are commits too (see the class comment). The lock after the monitor, as in
        // sync, which a quiet pass calls.
        writer.lock();
        try {
            if (store.isClosed()) {
                return;
            }
            FileStore<?> file = store.getFileStore();
            boolean quiet = store.getCurrentVersion() == seenVersion;
            if (!quiet) {
                quietSize = Long.MAX_VALUE;
                quietFill = -1;
                passesWithoutGain = 0;
            }
            if (sparse() && !quiet) {
                store.compact(COMPACT_BELOW_PERCENT, COMPACT_BYTES);
                if (file instanceof RandomAccessStore chunks && cuttable()) {
                    // Chunks freed in the middle are reused by new ones, but the file is only cut
                    // where its end is free: move a little towards the start while writes come too.
                    chunks.compactMoveChunks(COMPACT_BELOW_PERCENT, COMPACT_BYTES, store);
                }
            } else if (sparse() && passesWithoutGain < QUIET_PASSES_WITHOUT_GAIN) {
                compactFile(file);
                if (gainedOn(file, quietSize, quietFill)) {
                    quietSize = Math.min(quietSize, file.size());
                    quietFill = Math.max(quietFill, file.getChunksFillRate());
                    passesWithoutGain = 0;
                } else {
                    passesWithoutGain++;
                }
            }
            commitAlone();
            seenVersion = store.getCurrentVersion();
        } catch (RuntimeException e) {
            System.err.println("compaction failed: " + e);
        } finally {
            writer.unlock();
        }
    }

    /** Whether the file is now smaller than `size`, or its chunks fuller than `fill` (%). */
    private static boolean gainedOn(FileStore<?> file, long size, int fill) {
        return file.size() < size || file.getChunksFillRate() > fill;
    }

    private boolean sparse() {
        return store.getFileStore().getChunksFillRate() < COMPACT_BELOW_PERCENT || cuttable();
    }

    /** Whether chunks fill less of the file than they should, with more than the slack free. */
    private boolean cuttable() {
        int fill = store.getFillRate();
        return fill < COMPACT_BELOW_PERCENT && store.getFileStore().size() * (100 - fill) / 100 > SLACK_BYTES;
    }

    /**
     * What MVStore's `compactFile` does, at this class's fill rate: with everything synced, chunks
     * no longer live may be written over at once (retention 0) while the others are rewritten and
     * moved towards the start, and the file is cut behind the last one. A step that neither cuts
     * the file nor fills its chunks ends the pass: the chunks a rewrite emptied may not be free to
     * write over until the next pass, a second later, and until then a further rewrite only adds
     * chunks at the end of the file (or, with nothing left to move, a step does nothing at all).
     */
    private void compactFile(FileStore<?> file) {
        long stopAt = System.nanoTime() + QUIET_COMPACT_MS * 1_000_000L;
        // A chunk no longer live is written over only once the oldest version in use is later
        // than the one it died in, and MVStore frees such chunks in the order they died, stopping
        // at the first it may not free yet. Without writes nothing else makes a version: after a
        // large delete committed partway, whose last commits held all the live pages (too new to
        // be rewritten), the chunks it emptied kept the whole file until the next write.
        passes.merge("quiet", 1L, Long::sum);
        syncAlone();
        store.setRetentionTime(0);
        try {
            boolean gained;
            do {
                long size = file.size();
                int fill = file.getChunksFillRate();
                store.compact(COMPACT_BELOW_PERCENT, 4 * COMPACT_BYTES);
                commitAlone();
                store.sync();
                if (file instanceof RandomAccessStore chunks && cuttable()) {
                    chunks.compactMoveChunks(COMPACT_BELOW_PERCENT, QUIET_MOVE_BYTES, store);
                }
                gained = gainedOn(file, size, fill);
            } while (gained && sparse() && System.nanoTime() < stopAt);
        } finally {
            store.setRetentionTime(Main.RETENTION_MS);
        }
    }

    /**
     * Lets a running sync or compaction finish: interrupting a thread in file I/O would close the
     * store's file channel under it.
     */
    void close() {
        timer.shutdown();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sync();
        log.close();
    }
}
