package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/internal/cli"
)

// envOr is the variable name's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// printFlags is flag.PrintDefaults without the hidden (alias) flags.
func printFlags(fs *flag.FlagSet, hidden ...string) {
	show := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	show.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		for _, h := range hidden {
			if f.Name == h {
				return
			}
		}
		show.Var(f.Value, f.Name, f.Usage)
	})
	show.PrintDefaults()
}

// backup is `mqgate backup`: a verified copy of the store file, taken
// through a running server (--url: GET /v1/admin/backup, a consistent
// snapshot while it serves) or from a stopped one's data directory
// (--data). The copy is written beside --out, checked (store.Verify: the
// start-up checks, read-only) and only then renamed to --out.
func backup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mqgate backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "a running server's base URL (env MQGATE_URL; default "+cli.DefaultURL+" unless --data): the backup is taken while it serves")
	data := fs.String("data", "", "a stopped server's data directory (refused while a server holds it: use --url)")
	out := fs.String("out", "", "the backup file to write (must not exist)")
	key := fs.String("key", "", "an admin API key, when the server has --api-keys (env MQGATE_KEY)")
	// The flag and variable of earlier releases, kept as hidden aliases.
	fs.StringVar(key, "api-key", "", "")
	timeout := fs.Duration("timeout", time.Hour, "give up after this long")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: mqgate backup --out FILE [--url URL | --data DIR] [--key KEY]\n\nFlags:\n")
		printFlags(fs, "api-key")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cli.ExitUsage
	}
	if *url != "" && *data != "" {
		fmt.Fprintln(stderr, "mqgate backup: give --url (a running server) or --data (a stopped one), not both")
		return cli.ExitUsage
	}
	if *out == "" {
		fmt.Fprintln(stderr, "mqgate backup: --out FILE is required")
		fs.Usage()
		return cli.ExitUsage
	}
	if *data == "" && *url == "" {
		*url = envOr("MQGATE_URL", cli.DefaultURL)
	}
	if *key == "" {
		*key = envOr("MQGATE_KEY", os.Getenv("MQGATE_API_KEY"))
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(stderr, "mqgate backup: %s exists; choose a new file\n", *out)
		return 1
	}
	start := time.Now()
	n, err := writeBackup(*out, func(w io.Writer) (int64, error) {
		if *url != "" {
			return downloadBackup(*url, *key, *timeout, w)
		}
		n, err := store.BackupFile(filepath.Join(*data, store.FileName), w)
		if errors.Is(err, store.ErrLocked) {
			err = fmt.Errorf("%w: a server is running on %s; back up through it with --url", err, *data)
		}
		return n, err
	})
	if err != nil {
		fmt.Fprintln(stderr, "mqgate backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "backup written to %s: %d bytes in %v, verified\n", *out, n, time.Since(start).Round(time.Millisecond))
	return 0
}

// writeBackup writes the copy to a temporary file beside out, syncs and
// verifies it, and renames it to out.
func writeBackup(out string, copyTo func(io.Writer) (int64, error)) (int64, error) {
	tmp := out + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := copyTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if _, verr := store.Verify(tmp); verr != nil {
			err = fmt.Errorf("the copy fails its check: %w", verr)
		}
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return n, syncDir(filepath.Dir(out))
}

// downloadBackup streams GET /v1/admin/backup into w and checks that the
// whole snapshot arrived.
func downloadBackup(base, apiKey string, timeout time.Duration, w io.Writer) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(base, "/")+"/v1/admin/backup", nil)
	if err != nil {
		return 0, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	want, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil {
		return 0, errors.New("the server sent no Content-Length: cannot tell a whole backup from a cut one")
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && n != want {
		err = fmt.Errorf("received %d of %d bytes", n, want)
	}
	return n, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
