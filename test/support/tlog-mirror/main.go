// Command tlog-mirror is the tests' independent tlog-tiles client: it fetches a log's checkpoint,
// verifies its signature with golang.org/x/mod/sumdb/note, then fetches, authenticates and writes
// every entry with filippo.io/torchwood's client, which checks each tile against the checkpoint.
//
//	tlog-mirror -vkey <log vkey> <log URL prefix> <output file>
//
// The output holds one line per entry, its index and its bytes in hex, after a first line with the
// checkpoint's size and base64 root hash. Any failure exits 1 with the reason.
package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

func main() {
	vkey := flag.String("vkey", "", "the log's verifier key")
	flag.Parse()
	if *vkey == "" || flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: tlog-mirror -vkey <vkey> <log URL prefix> <output file>")
		os.Exit(2)
	}
	if err := mirror(*vkey, strings.TrimSuffix(flag.Arg(0), "/"), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "tlog-mirror:", err)
		os.Exit(1)
	}
}

func mirror(vkey, base, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("log key: %w", err)
	}
	res, err := http.Get(base + "/checkpoint")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("checkpoint: status %d, %v", res.StatusCode, err)
	}
	n, err := note.Open(body, note.VerifierList(verifier))
	if err != nil {
		return fmt.Errorf("checkpoint signature: %w", err)
	}
	checkpoint, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		return err
	}
	if checkpoint.Origin != verifier.Name() {
		return fmt.Errorf("checkpoint origin %q is not the key's %q", checkpoint.Origin, verifier.Name())
	}
	fetcher, err := torchwood.NewTileFetcher(base + "/")
	if err != nil {
		return err
	}
	client, err := torchwood.NewClient(fetcher)
	if err != nil {
		return err
	}
	var lines strings.Builder
	fmt.Fprintf(&lines, "%d %s\n", checkpoint.N, checkpoint.Hash)
	next := int64(0)
	// Entries may stop short of a partial bundle; resuming against the same tree goes on from there.
	for next < checkpoint.N {
		before := next
		for i, entry := range client.Entries(ctx, checkpoint.Tree, next) {
			if i != next {
				return fmt.Errorf("entry %d came where %d was due", i, next)
			}
			fmt.Fprintf(&lines, "%d %s\n", i, hex.EncodeToString(entry))
			next++
		}
		if err := client.Err(); err != nil {
			return fmt.Errorf("entries from %d: %w", before, err)
		}
		if next == before {
			return fmt.Errorf("no progress at entry %d of %d", next, checkpoint.N)
		}
	}
	return os.WriteFile(out, []byte(lines.String()), 0o644)
}
