package tripwire.mongo;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import de.bwaldvogel.mongo.backend.AbstractCursor;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A find's matches read batch by batch, as the client asks for them, from a walk of the index that
 * answers it, or of the whole store when none does. The library's own cursor is a list of every
 * match, decoded, made before the first batch: a 100,000-record evidence export held them all at
 * once and ran a 256 MB heap out, taking the server down, as did a `find({})` over 200,000
 * documents of 1 KB.
 */
final class IndexCursor extends AbstractCursor {

    /**
     * Where the matches may be, walked a command at a time: each command's part starts after the
     * position last handed out, at the store's version of that moment.
     */
    abstract static class Positions {
        private Object peeked;

        /** Called by each command that goes on with the walk, before it does. */
        abstract void resume();

        /** The position after the last one read, or null once the walk is done. */
        abstract Object advance();

        /** The next position, or null once the walk is done. */
        final Object next() {
            if (peeked == null) {
                return advance();
            }
            Object position = peeked;
            peeked = null;
            return position;
        }

        /** Whether a position is left (it is then read ahead, and handed out next). */
        final boolean hasNext() {
            if (peeked == null) {
                peeked = advance();
            }
            return peeked != null;
        }
    }

    /** The first batch when the find names no size: MongoDB's. */
    static final int FIRST_BATCH = 101;
    /** A later batch when the getMore names no size (MongoDB's is up to 16 MB). */
    static final int NEXT_BATCH = 1000;

    private final Positions walk;
    private final Function<Object, Document> read;
    private final Predicate<Document> matches;
    private final UnaryOperator<List<Document>> project;
    /** Matches still to hand out under the find's limit. */
    private int left;
    /** Matches still to pass over under the find's skip. */
    private int skip;

    IndexCursor(long id, Positions walk, Function<Object, Document> read, Predicate<Document> matches,
                UnaryOperator<List<Document>> project, int skip, int limit) {
        super(id);
        this.walk = walk;
        this.read = read;
        this.matches = matches;
        this.project = project;
        this.skip = skip;
        this.left = limit > 0 ? limit : Integer.MAX_VALUE;
    }

    @Override
    public List<Document> takeDocuments(int size) {
        int wanted = Math.min(size > 0 ? size : NEXT_BATCH, left);
        List<Document> batch = new ArrayList<>();
        walk.resume();
        while (batch.size() < wanted) {
            Object position = walk.next();
            if (position == null) {
                break;
            }
            // Read at this command's version: a document removed or changed since the find is
            // left out, or handed out as it is now, if it still matches.
            Document document = read.apply(position);
            if (document != null && matches.test(document)) {
                if (skip > 0) {
                    skip--;
                } else {
                    batch.add(document);
                }
            }
        }
        left -= batch.size();
        return project.apply(batch);
    }

    /** Asked right after a batch is taken, in the same command. */
    @Override
    public boolean isEmpty() {
        return left == 0 || !walk.hasNext();
    }
}
