// Command ferretdb runs FerretDB v1 (MongoDB wire protocol over SQLite) for local development and
// tests, where no MongoDB server can be installed. FerretDB's own command panics when installed as a
// module (its version file is missing), so this wrapper embeds the public package instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data-dir", "data", "folder for the SQLite files")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fail("bad -log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		fail("bad -data-dir: %v", err)
	}
	if err = os.MkdirAll(dir, 0o700); err != nil {
		fail("cannot create data folder: %v", err)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		Logger:   logger,
		Handler:  "sqlite",
		// WAL with synchronous=NORMAL: survives a crash of this process, not of the machine (a
		// development and test database), and skips an fsync on every commit.
		SQLiteURL: "file:" + dir + "/?_pragma=synchronous(normal)",
	})
	if err != nil {
		fail("cannot start: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	go func() {
		// MongoDBURI blocks until the listener is bound; printing it tells the parent we are ready.
		fmt.Println(f.MongoDBURI())
	}()

	if err = f.Run(ctx); err != nil {
		fail("stopped: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ferretdb: "+format+"\n", args...)
	os.Exit(1)
}
