package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mqgate/mqgate/core/store"
)

// checkReport is what `mqgate check` prints (-o json: this object).
type checkReport struct {
	Path   string `json:"path"`
	Status string `json:"status"` // healthy, damaged, unsettled, locked, missing
	// Problem says what is wrong and what to do; empty when healthy.
	Problem        string `json:"problem,omitempty"`
	Bytes          int64  `json:"bytes,omitempty"`
	PageSize       int    `json:"pageSize,omitempty"`
	Pages          uint64 `json:"pages,omitempty"`
	InUsePages     uint64 `json:"inUsePages,omitempty"`
	TxID           uint64 `json:"txid,omitempty"`
	CorruptRecords int    `json:"corruptRecords"`
	SetAside       int    `json:"setAside"`
	Warning        string `json:"warning,omitempty"`
	TookMillis     int64  `json:"tookMillis"`
}

// checkCmd is `mqgate check DATA_DIR`: the offline self check of a
// stopped server's data directory. It reads the store file under a
// shared lock without writing it: every page with plain reads (the
// pre-check of `serve --full-check`), then mqgate's own structures and
// the newest records through a read-only bbolt (store.VerifyReport).
// Exit 0 healthy, 1 damaged or not checkable (a server holds the dir,
// a crash left the file unsettled, no store), 2 usage.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mqgate check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mqgate check [-o text|json] DATA_DIR\n\n"+
			"Reads every page of DATA_DIR/mqgate.db and checks mqgate's structures, without writing.\n"+
			"Exit 0 healthy, 1 damaged or not checkable, 2 usage.")
		fs.PrintDefaults()
	}
	out := fs.String("o", "text", "output: text or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || *out != "text" && *out != "json" {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	r := checkReport{Path: filepath.Join(dir, store.FileName)}
	start := time.Now()
	if fi, err := os.Stat(r.Path); err != nil || fi.Size() == 0 {
		r.Status, r.Problem = "missing", fmt.Sprintf("%s holds no store (no %s, or an empty one)", dir, store.FileName)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			r.Problem = err.Error()
		}
	} else {
		rep, err := store.VerifyReport(r.Path)
		r.Bytes, r.PageSize, r.Pages, r.InUsePages, r.TxID = rep.Size, rep.PageSize, rep.Pages, rep.InUsePages, rep.TxID
		r.CorruptRecords, r.SetAside, r.Warning = rep.Corrupt, rep.SetAside, rep.Warning
		switch {
		case errors.Is(err, store.ErrLocked):
			r.Status, r.Problem = "locked", err.Error()+": a server is running on it; stop it to check the file (or back up through it: mqgate backup --url)"
		case errors.Is(err, store.ErrUnsettled):
			r.Status, r.Problem = "unsettled", err.Error()
		case err != nil:
			r.Status, r.Problem = "damaged", err.Error()
		case rep.Corrupt > 0:
			r.Status = "damaged"
			r.Problem = fmt.Sprintf("%d stored records fail their checksum; a start sets them aside (listed by GET /v1/topics/{topic}/corrupt)", rep.Corrupt)
		default:
			r.Status = "healthy"
		}
	}
	r.TookMillis = time.Since(start).Milliseconds()
	if *out == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
	} else {
		printCheck(stdout, r)
	}
	if r.Status != "healthy" {
		return 1
	}
	return 0
}

func printCheck(w io.Writer, r checkReport) {
	fmt.Fprintf(w, "%s: %s\n", r.Path, r.Status)
	if r.Problem != "" {
		fmt.Fprintf(w, "  problem:  %s\n", r.Problem)
	}
	if r.Warning != "" {
		fmt.Fprintf(w, "  warning:  %s\n", r.Warning)
	}
	if r.PageSize > 0 {
		fmt.Fprintf(w, "  file:     %d bytes, %d pages of %d bytes (%d in use), transaction %d\n",
			r.Bytes, r.Pages, r.PageSize, r.InUsePages, r.TxID)
	}
	if r.Status == "healthy" || r.Status == "damaged" && r.PageSize > 0 {
		fmt.Fprintf(w, "  records:  %d failing their checksum, %d set aside before\n", r.CorruptRecords, r.SetAside)
	}
	fmt.Fprintf(w, "  took:     %v\n", time.Duration(r.TookMillis)*time.Millisecond)
}
