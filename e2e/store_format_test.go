package e2e

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The fixture testdata/store-before-store10.db.gz is a store written by the
// binary built from main before the store10 changes (commit 8dfdaeb):
// topics "orders" (4 queues, grown to 6) and "audit", 64 messages with
// text and binary bodies, tags, keys, properties and sharding keys, a
// consumer group, a deleted topic emptied, and bbolt's freelist synced
// at every commit as that binary did. store-before-store10.jsonl holds what
// that binary answered to GET requests on it.

// loadFixture unpacks the fixture as dir/mqgate.db.
func loadFixture(t *testing.T, dir string) {
	t.Helper()
	in, err := os.Open("testdata/store-before-store10.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "mqgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// fixtureAnswers are the old binary's answers, by path.
func fixtureAnswers(t *testing.T) []struct {
	Path   string          `json:"path"`
	Answer json.RawMessage `json:"answer"`
} {
	t.Helper()
	f, err := os.Open("testdata/store-before-store10.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []struct {
		Path   string          `json:"path"`
		Answer json.RawMessage `json:"answer"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Path   string          `json:"path"`
			Answer json.RawMessage `json:"answer"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// within reports where want is not part of got: every field of every
// object in want must be in got with the same value (got may have fields
// added since), arrays element by element.
func within(want, got any, at string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v, want an object", at, got)
		}
		for k, v := range w {
			if err := within(v, g[k], at+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: %v, want %d elements", at, got, len(w))
		}
		for i := range w {
			if err := within(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("%s: %v, want %v", at, got, want)
	}
	return nil
}

// checkFixture GETs every path the old binary answered and compares.
func checkFixture(t *testing.T, s *server) {
	t.Helper()
	answers := fixtureAnswers(t)
	if len(answers) < 60 {
		t.Fatalf("%d fixture answers", len(answers))
	}
	for _, a := range answers {
		r := s.do(t, "GET", a.Path, nil)
		want(t, r, 200)
		var w, g any
		if err := json.Unmarshal(a.Answer, &w); err != nil {
			t.Fatal(err)
		}
		r.JSON(t, &g)
		if err := within(w, g, a.Path); err != nil {
			t.Fatalf("the store written before store10 reads back differently: %v", err)
		}
	}
}

// TestStoreWrittenBeforeStore10: today's binary opens a store written by
// the binary before it (freelist synced, layout version 1: it migrates it
// to segments), answers every read as that binary did, writes to it,
// reopens it, compacts it, retires a topic's messages by dropping its
// segments (small segments here, so the topic has its own) and still
// passes its start-up checks.
func TestStoreWrittenBeforeStore10(t *testing.T) {
	dir := t.TempDir()
	loadFixture(t, dir)
	// The migration cuts a segment per record. The fixture's messages
	// were stored on 2026-11-30 under 48 and 72 h of retention, so at
	// the real hour the cleaner's first pass would remove them (from
	// 2026-12-02 on the old answers were 404s): an hour of retention is
	// stretched to 10,000 h, which keeps them for decades.
	seg := []string{"--segment-bytes", "1", "--retention-unit", "10000h"}
	s := startServer(t, dir, seg...)
	if !strings.Contains(s.Logs(), "store migrated from layout version 1 to 2") {
		t.Fatal("the layout version 1 store was not migrated")
	}
	checkFixture(t, s)
	createTopic(t, s, "fresh", 1)
	r := s.do(t, "POST", "/v1/topics/fresh/messages", map[string]any{"body": "new", "keys": []string{"shared"}})
	want(t, r, 201)
	var pr publishResult
	r.JSON(t, &pr)
	s.stop(t)

	s = startServer(t, dir, seg...) // reopened: bbolt rebuilds the freelist
	checkFixture(t, s)
	want(t, s.do(t, "GET", "/v1/topics/fresh/messages/"+pr.MessageID, nil), 200)
	s.stop(t)

	if out, err := runBinary(t, 60*time.Second, "compact", "--data", dir); err != nil {
		t.Fatalf("compact: %v %s", err, out)
	}
	s = startServer(t, dir, seg...)
	checkFixture(t, s)
	// Deleting drops the topic's segments; its key index entries go with
	// them.
	want(t, s.do(t, "DELETE", "/v1/topics/audit", nil), 204)
	checkFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), "deleted topics emptied") {
			return fmt.Errorf("the deleted topic is not emptied yet")
		}
		return nil
	})
	createTopic(t, s, "audit", 1)
	r = s.do(t, "GET", "/v1/topics/audit/messages?key=x", nil)
	want(t, r, 200)
	if strings.Contains(string(r.Body), "a2") {
		t.Fatalf("a deleted message is still found by its key: %s", r.Body)
	}
	s.stop(t)
	out, err := runBinary(t, 60*time.Second, "backup", "--data", dir, "--out", filepath.Join(t.TempDir(), "b.db"))
	if err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("offline backup: %v %s", err, out)
	}
}
