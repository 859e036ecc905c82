package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/internal/cli"
)

// compact is `mqgate compact`: rewrite a stopped server's store into a
// file holding only its data (store.Compact), giving the free pages back
// to the operating system. It refuses while a server holds the directory.
func compact(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mqgate compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", DefaultConfig().Data, "the data directory of a stopped server")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cli.ExitUsage
	}
	start := time.Now()
	res, err := store.Compact(*data)
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(stderr, "mqgate compact: %v\nA server is running on %s: stop it first (compaction is offline; a backup is not).\n", err, *data)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "mqgate compact:", err)
		return 1
	}
	fmt.Fprintf(stdout, "compacted %s: %d → %d bytes (pages in use before: %d bytes; data: %d bytes in %d keys, %d buckets) in %v\n",
		res.Path, res.Before, res.After, res.Live, res.Bytes, res.Keys, res.Buckets, time.Since(start).Round(time.Millisecond))
	return 0
}
