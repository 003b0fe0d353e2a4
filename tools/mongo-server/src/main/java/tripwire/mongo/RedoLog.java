package tripwire.mongo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.DataType;

/**
 * What keeps an acknowledged write without a store commit of its own. A commit writes every page
 * the write changed, whole, with the path to each map's root (about 30 KB for a 275-byte insert),
 * and it was most of a write command's time. Instead, every change a write command makes to the
 * collections' maps (documents, indexes, sizes) is appended to `data.redo` beside the store, one
 * frame per command, and the frame is in the file (the OS's cache, which a killed process does not
 * lose) before the command is answered; a journaled write waits for the file's sync as well.
 * {@link GroupCommit} commits and syncs the store in the background; each commit records the last
 * frame it holds, and the log starts over once a synced store holds all of it.
 * <p>
 * Opening the store applies the frames that follow the last commit, in order, and stops at the
 * first frame that is torn or does not follow (a power loss may keep the file only in part). A
 * frame holds each change's result (the new value, or the key's removal), so applying a frame the
 * store already holds changes nothing, and a command is applied whole or not at all.
 * <p>
 * Everything here but {@link #syncThrough} runs under {@link GroupCommit}'s lock, held by one
 * write command or one commit at a time. A command that creates or removes a map (a new
 * collection or index, a drop) is committed and synced instead of logged, as is one that changes
 * more than {@link #MAX_FRAME} or {@link GroupCommit#UNSAVED_BYTES}.
 */
final class RedoLog {

    /** A frame: its length and checksum (of what follows), its number, then its changes. */
    private static final int HEADER = 16;
    private static final int MAX_FRAME = 16 << 20;
    /**
     * A log file larger than this (bulk writes between two syncs) is cut when it starts over; the
     * service's own writes between two syncs take a few KB.
     */
    private static final long KEEP = 1 << 20;
    private static final byte PUT = 1;
    private static final byte REMOVE = 2;
    private static final String APPLIED = "appliedThrough";

    private final MVStore store;
    private final FileChannel file;
    /** The last frame the store holds, committed with it. */
    private final MVMap<String, Long> applied;
    /** Frames not yet in the file: the open one, and finished ones sent with `j: false`. */
    private final WriteBuffer pending = new WriteBuffer(1 << 16);
    /** The thread whose command's frame is open, if any (read by others: a change outside a command). */
    private volatile Thread writer;
    private int frameStart;
    /** The last frame begun; the one the next commit records. */
    private long last;
    /**
     * The open command opened or cleared a map or changed more than a frame holds, or a map
     * changed outside a write command (a read that opens a new database creates its maps).
     */
    private volatile boolean syncInstead;
    /** The last frame in the file. */
    private volatile long written;
    /** Every frame through this one is on disk: in the synced log, or in the store as last synced. */
    private volatile long durable;
    /** The store's map of maps when the open command began: creating or removing a map changes it. */
    private Object mapsBefore;
    /** Where the next frame goes in the file. */
    private long position;
    /** The store's unsaved memory when the open command began, or last committed partway. */
    private int unsavedBefore;

    RedoLog(MVStore store, Path file) {
        this.store = store;
        this.applied = store.openMap("tripwire.redo");
        this.last = applied.getOrDefault(APPLIED, 0L);
        this.written = last;
        this.durable = last;
        try {
            this.file = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A map builder whose maps' changes are logged. */
    static <K, V> MVMap.Builder<K, V> loggedMap() {
        return new MVMap.Builder<>() {
            @Override
            protected MVMap<K, V> create(Map<String, Object> config) {
                RedoLog log = IndexedDatabase.redo;
                if (log != null) {
                    log.mapOpened();
                }
                config.put("singleWriter", false);
                return new LoggedMap<>(config, getKeyType(), getValueType());
            }
        };
    }

    private static final class LoggedMap<K, V> extends MVMap<K, V> {

        LoggedMap(Map<String, Object> config, DataType<K> keyType, DataType<V> valueType) {
            super(config, keyType, valueType);
        }

        @Override
        public V operate(K key, V value, DecisionMaker<? super V> decisionMaker) {
            V old = super.operate(key, value, decisionMaker);
            RedoLog log = IndexedDatabase.redo;
            if (log != null) {
                log.changed(this, key, old);
            }
            return old;
        }

        @Override
        public void clear() {
            super.clear();
            RedoLog log = IndexedDatabase.redo;
            if (log != null) {
                log.mapOpened();
            }
        }
    }

    // ---- a command's frame ----

    void begin() {
        writer = Thread.currentThread();
        mapsBefore = store.getMetaMap().getRootPage();
        frameStart = pending.position();
        pending.position(frameStart + HEADER);
        last++;
        unsavedBefore = store.getUnsavedMemory();
    }

    /**
     * Records a change the running command made; one made outside a command needs a sync. What
     * leaves the key's value as it was (compaction rewriting its page, a `putIfAbsent` that finds
     * the key) is no change.
     */
    private <K, V> void changed(MVMap<K, V> map, K key, V old) {
        V value = map.get(key);
        if (value == old) {
            return;
        }
        if (Thread.currentThread() != writer) {
            syncInstead = true;
            return;
        }
        if (syncInstead) {
            return;
        }
        pending.putInt(map.getId()).put(value == null ? REMOVE : PUT);
        map.getKeyType().write(pending, key);
        if (value != null) {
            map.getValueType().write(pending, value);
        }
        if (pending.position() - frameStart > MAX_FRAME) {
            syncInstead = true;
        }
    }

    /**
     * Called after each document a command writes (whole: with its index entries). Once the
     * command's changes pass {@link GroupCommit#UNSAVED_BYTES}, they are committed, and the command
     * is synced when it ends rather than logged. A server killed before then keeps the documents it
     * had written by the last such commit, as MongoDB keeps part of a multi-document write that did
     * not finish.
     */
    void betweenDocuments() {
        if (Thread.currentThread() != writer || store.getUnsavedMemory() - unsavedBefore < GroupCommit.UNSAVED_BYTES) {
            return;
        }
        syncInstead = true;
        beforeCommit();
        store.commit();
        // The command goes on; its frame, never to be written, starts over.
        writer = Thread.currentThread();
        frameStart = pending.position();
        unsavedBefore = store.getUnsavedMemory();
    }

    private void mapOpened() {
        syncInstead = true;
    }

    /** Whether the command that just ran must be committed and synced rather than logged. */
    boolean needsSync() {
        return syncInstead || store.getMetaMap().getRootPage() != mapsBefore;
    }

    /** The last frame begun (and closed, or synced): what a journaled writer waits for. */
    long last() {
        return last;
    }

    /** Closes the command's frame, and writes it (and any before it) to the file if told to. */
    void end(boolean write) {
        writer = null;
        if (pending.position() == frameStart + HEADER) {
            // Nothing changed: no frame, and the next one takes this one's number.
            pending.position(frameStart);
            last--;
        } else {
            int length = pending.position() - frameStart - 8;
            pending.putInt(frameStart, length);
            pending.getBuffer().putLong(frameStart + 8, last);
            CRC32C checksum = new CRC32C();
            checksum.update(pending.getBuffer().array(), frameStart + 8, length);
            pending.putInt(frameStart + 4, (int) checksum.getValue());
        }
        if (write) {
            write();
        }
    }

    private void write() {
        if (pending.position() == 0) {
            return;
        }
        ByteBuffer frames = pending.getBuffer().flip();
        try {
            while (frames.hasRemaining()) {
                position += file.write(frames, position);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            pending.clear();
        }
        written = last;
    }

    /** Writes the frames not in the file yet (`j: false` writes'), for a sync. @return the last frame */
    long flush() {
        write();
        return last;
    }

    /**
     * Syncs the file unless the frames through `frame` are on disk already (in the log, or in the
     * store at its last sync).
     * @return whether it synced
     */
    boolean syncThrough(long frame) {
        if (durable >= frame) {
            return false;
        }
        long upTo = written;
        try {
            file.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        raiseDurable(upTo);
        return true;
    }

    private synchronized void raiseDurable(long frame) {
        durable = Math.max(durable, frame);
    }

    /**
     * Before a commit: the frames not yet in the file go there first (so the log never misses one
     * that a later, synced frame follows, should the commit not reach the disk), but the command
     * being synced instead of logged, if any, whose changes were not all recorded; and the store
     * records the last frame it holds.
     */
    void beforeCommit() {
        if (writer != null) {
            pending.position(frameStart);
            writer = null;
        }
        write();
        if (applied.getOrDefault(APPLIED, 0L) != last) {
            applied.put(APPLIED, last);
        }
    }

    /**
     * After a commit is synced: the store on disk holds every frame, and the log starts over at the
     * start of its file, writing over the frames there (whose numbers the store holds, so opening
     * skips them) rather than cutting the file: a sync of blocks the file already has leaves its
     * size alone, which makes it a fraction of a sync that also records a new size.
     */
    void afterSync() {
        syncInstead = false;
        position = 0;
        try {
            if (file.size() > KEEP) {
                file.truncate(0);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        raiseDurable(last);
    }

    /**
     * Applies the frames that follow the last commit, once at open, after every map is open (the
     * library opens every collection and index with the store) and before any command.
     * @return how many frames were applied
     */
    int recover() {
        long through = last;
        ByteBuffer all;
        try {
            all = ByteBuffer.allocate(Math.toIntExact(file.size())).order(ByteOrder.BIG_ENDIAN);
            while (all.hasRemaining() && file.read(all, all.position()) > 0) {
                // read the whole file
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        all.flip();
        int count = 0;
        CRC32C checksum = new CRC32C();
        while (all.remaining() >= HEADER) {
            int start = all.position();
            int length = all.getInt(start);
            if (length < 8 || length > all.remaining() - 8) {
                break;
            }
            checksum.reset();
            checksum.update(all.array(), start + 8, length);
            if (all.getInt(start + 4) != (int) checksum.getValue()) {
                break;
            }
            long number = all.getLong(start + 8);
            ByteBuffer frame = all.slice(start + HEADER, length - 8);
            all.position(start + 8 + length);
            if (number <= through) {
                continue;
            }
            if (number != through + 1 || !apply(frame)) {
                break;
            }
            through = number;
            count++;
        }
        last = through;
        written = through;
        return count;
    }

    private record Change(MVMap<Object, Object> map, Object key, Object value) {
    }

    /** Applies a frame whole, or (if any of it cannot be read) none of it. */
    private boolean apply(ByteBuffer frame) {
        List<Change> changes = new ArrayList<>();
        try {
            while (frame.hasRemaining()) {
                MVMap<Object, Object> map = store.getMap(frame.getInt());
                byte change = frame.get();
                if (map == null) {
                    System.err.println("redo log: a frame changes a map the store does not have; stopped there");
                    return false;
                }
                Object key = map.getKeyType().read(frame);
                changes.add(new Change(map, key, change == PUT ? map.getValueType().read(frame) : null));
            }
        } catch (RuntimeException e) {
            // Checksummed, so only a frame written by another version of this server.
            System.err.println("redo log: a frame could not be read (" + e + "); stopped there");
            return false;
        }
        for (Change change : changes) {
            if (change.value() == null) {
                change.map().remove(change.key());
            } else {
                change.map().put(change.key(), change.value());
            }
        }
        return true;
    }

    void close() {
        try {
            file.close();
        } catch (IOException e) {
            System.err.println("redo log: " + e);
        }
    }
}
