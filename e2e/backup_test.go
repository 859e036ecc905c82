package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBackupWhilePublishing: publishers keep a steady stream going while
// `mqgate backup --url` takes a backup through the running server; the
// backup restores to a server that starts (so it passed the start-up
// checks) and serves every message acknowledged before the backup began.
// A backup from the data directory is refused while the server holds it.
func TestBackupWhilePublishing(t *testing.T) {
	src := startServer(t, t.TempDir())
	createTopic(t, src, "orders", 4)

	type ack struct {
		id string
		at time.Time // when the 201 arrived
	}
	var (
		mu    sync.Mutex
		acks  []ack
		errs  []error
		stop  = make(chan struct{})
		ready = make(chan struct{}) // closed once 300 are acknowledged
		wg    sync.WaitGroup
	)
	for p := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := src.try("POST", "/v1/topics/orders/messages",
					map[string]any{"body": fmt.Sprintf("p%d-%d %s", p, i, strings.Repeat("x", 1000))})
				now := time.Now()
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case r.Status != 201:
					errs = append(errs, fmt.Errorf("status %d: %s", r.Status, r.Body))
				default:
					var pr publishResult
					if err := jsonUnmarshal(r.Body, &pr); err != nil {
						errs = append(errs, err)
						break
					}
					acks = append(acks, ack{pr.MessageID, now})
					if len(acks) == 300 {
						close(ready)
					}
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("300 publishes not acknowledged within 60 s")
	}

	// Offline backup of a served directory is refused.
	out, err := runBinary(t, 30*time.Second, "backup", "--data", src.dir, "--out", filepath.Join(t.TempDir(), "x.db"))
	if err == nil || !strings.Contains(out, "--url") {
		t.Fatalf("backup --data of a running server: %v %s", err, out)
	}

	file := filepath.Join(t.TempDir(), "backup.db")
	began := time.Now()
	out, err = runBinary(t, 120*time.Second, "backup", "--url", src.base, "--out", file)
	if err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("backup: %v %s", err, out)
	}
	mu.Lock()
	during := 0
	for _, a := range acks {
		if a.at.After(began) {
			during++
		}
	}
	mu.Unlock()
	close(stop)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("publishing failed: %v", errs[0])
	}
	t.Logf("backup: %s; %d acknowledged before it began, %d while it ran", strings.TrimSpace(out), len(acks)-during, during)
	if during == 0 {
		t.Log("no publish was acknowledged while the backup ran (it was quick)")
	}
	if _, err := os.Stat(file + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("the partial file is left: %v", err)
	}
	src.stop(t)

	dst := t.TempDir()
	if err := os.Rename(file, filepath.Join(dst, "mqgate.db")); err != nil {
		t.Fatal(err)
	}
	restored := startServer(t, dst)
	n := 0
	for _, a := range acks {
		if !a.at.Before(began) {
			continue
		}
		n++
		r := restored.do(t, "GET", "/v1/topics/orders/messages/"+a.id, nil)
		if r.Status != 200 {
			t.Fatalf("message %s, acknowledged before the backup began, reads %d from the restored store: %s", a.id, r.Status, r.Body)
		}
	}
	if n < 300 {
		t.Fatalf("only %d acknowledged before the backup", n)
	}
}

// TestCompactCLI: compaction refuses while the server runs; after most
// topics are deleted and emptied it shrinks the file, and the server
// restarts on it with the kept topic's messages.
func TestCompactCLI(t *testing.T) {
	dir := t.TempDir()
	// A segment per group commit: each topic's messages have segments of
	// their own, which its deletion frees.
	s := startServer(t, dir, "--segment-bytes", "1")
	body := strings.Repeat("y", 1024)
	batch := make([]map[string]string, 100)
	for i := range batch {
		batch[i] = map[string]string{"body": body}
	}
	var keptID string
	for i := range 6 {
		name := fmt.Sprintf("t%d", i)
		createTopic(t, s, name, 2)
		for range 10 {
			want(t, s.do(t, "POST", "/v1/topics/"+name+"/messages/batch", map[string]any{"messages": batch}), 201)
		}
		if i == 0 {
			r := s.do(t, "POST", "/v1/topics/t0/messages", map[string]string{"body": "kept"})
			want(t, r, 201)
			var pr publishResult
			r.JSON(t, &pr)
			keptID = pr.MessageID
		}
	}
	for i := 1; i < 6; i++ {
		want(t, s.do(t, "DELETE", fmt.Sprintf("/v1/topics/t%d", i), nil), 204)
	}
	checkFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), "deleted topics emptied") {
			return fmt.Errorf("the trash is not empty yet")
		}
		return nil
	})
	m := s.do(t, "GET", "/metrics", nil)
	for _, series := range []string{"mqgate_store_file_bytes", "mqgate_store_live_bytes", "mqgate_store_free_pages"} {
		if !regexp.MustCompile(`(?m)^` + series + ` \d`).Match(m.Body) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	var tp struct {
		Stats struct {
			Bytes int64 `json:"bytes"`
		} `json:"stats"`
	}
	s.do(t, "GET", "/v1/topics/t0", nil).JSON(t, &tp)
	if tp.Stats.Bytes < 1000*1024 || tp.Stats.Bytes > 2000*1024 {
		t.Errorf("topic t0 holds 1,001 messages of about 1 KiB; stats say %d bytes", tp.Stats.Bytes)
	}

	if out, err := runBinary(t, 30*time.Second, "compact", "--data", dir); err == nil || !strings.Contains(out, "stop it first") {
		t.Fatalf("compact while serving: %v %s", err, out)
	}
	s.stop(t)
	out, err := runBinary(t, 120*time.Second, "compact", "--data", dir)
	if err != nil {
		t.Fatalf("compact: %v %s", err, out)
	}
	t.Log(strings.TrimSpace(out))
	sizes := regexp.MustCompile(`: (\d+) → (\d+) bytes`).FindStringSubmatch(out)
	if sizes == nil {
		t.Fatalf("compact output %q", out)
	}
	before, _ := strconv.ParseInt(sizes[1], 10, 64)
	after, _ := strconv.ParseInt(sizes[2], 10, 64)
	if after*2 > before {
		t.Fatalf("compacted %d → %d bytes", before, after)
	}
	s = startServer(t, dir)
	want(t, s.do(t, "GET", "/v1/topics/t0/messages/"+keptID, nil), 200)
	want(t, s.do(t, "GET", "/v1/topics/t1", nil), 404)
}
