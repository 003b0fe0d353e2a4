package tripwire.mongo;

import java.nio.file.Files;
import java.nio.file.Path;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.ServerVersion;

/**
 * `java tripwire.mongo.Main --dbpath DIR --port N [--bind ADDRESS]`: a MongoDB-wire server for
 * development and tests, its data in DIR/data.mv.db. Prints "listening on HOST:PORT" when ready;
 * SIGTERM closes the store cleanly (a SIGKILL loses nothing acknowledged either).
 */
public final class Main {

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
        MVStore store = new MVStore.Builder().fileName(folder.resolve("data.mv.db").toString()).open();
        IndexedDatabase.store = store;
        DurableBackend backend = new DurableBackend(store);
        backend.version(ServerVersion.MONGO_5_0);
        MongoServer server = new MongoServer(backend);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            backend.close();
        }));
        server.bind(bind, port);
        System.out.printf("listening on %s:%d (opened %s in %d ms)%n", bind, port, folder,
            (System.nanoTime() - started) / 1_000_000);
    }
}
