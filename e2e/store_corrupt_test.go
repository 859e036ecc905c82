package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A message whose stored bytes fail their checksum is set aside and
// reported, never skipped silently (SPEC §8 item 12): the reproduction
// users found (1,000 published, a consumer got 999, nothing said where the
// other went) against the real binary.
func TestCorruptRecordReportedNotSkipped(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "t", 4)
	const n = 1000
	var victimID string
	for b := range n / 250 {
		msgs := make([]map[string]any, 250)
		for i := range msgs {
			msgs[i] = map[string]any{"body": fmt.Sprintf("message %04d of the corrupt-record test", b*250+i)}
		}
		r := s.do(t, "POST", "/v1/topics/t/messages/batch", map[string]any{"messages": msgs})
		want(t, r, http.StatusCreated)
		var br struct{ Results []publishResult }
		r.JSON(t, &br)
		if b == 2 {
			// Message 0625: a batch goes to one queue, so this one is in
			// the middle of its queue and not among the newest 256 records
			// the start-up check reads. The consumer's pull meets it.
			victimID = br.Results[125].MessageID
		}
	}
	s.stop(t)

	// A bad disk flips a bit inside the record's body: bbolt's pages stay
	// well formed, only the record's CRC-32C tells. Stale copies in free
	// pages get the same flip (harmless).
	path := filepath.Join(dir, dbFile)
	db, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := []byte("message 0625 of the corrupt-record test")
	hits := 0
	for i := 0; ; {
		j := bytes.Index(db[i:], marker)
		if j < 0 {
			break
		}
		db[i+j+len("message 06")] ^= 0x01
		hits++
		i += j + len(marker)
	}
	if hits == 0 {
		t.Fatal("the message's body is not in the file")
	}
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, dir)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "t"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
	seen := map[string]bool{}
	checkFor(t, 60*time.Second, time.Millisecond, func() error {
		got := receive(t, s, "g", map[string]any{"maxMessages": 32, "waitSeconds": 1})
		var handles []string
		for _, m := range got {
			if m.MessageID == victimID {
				return fmt.Errorf("the corrupt message was delivered: %+v", m)
			}
			seen[m.MessageID] = true
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			ack(t, s, "g", handles...)
		}
		if len(seen) < n-1 {
			return fmt.Errorf("received %d of %d", len(seen), n-1)
		}
		return nil
	})
	if len(seen) != n-1 {
		t.Fatalf("received %d distinct messages, want %d", len(seen), n-1)
	}

	// Counted in the topic's stats…
	var tp struct {
		Stats struct {
			Messages int64 `json:"messages"`
			Corrupt  int64 `json:"corrupt"`
		} `json:"stats"`
	}
	r = s.do(t, "GET", "/v1/topics/t", nil)
	want(t, r, http.StatusOK)
	r.JSON(t, &tp)
	if tp.Stats.Corrupt != 1 || tp.Stats.Messages != n {
		t.Fatalf("stats %s: want 1 corrupt of %d", r.Body, n)
	}
	// …listed with its id and place…
	var list struct {
		Messages []struct {
			MessageID       string `json:"messageId"`
			Topic           string `json:"topic"`
			QueueID         int    `json:"queueId"`
			QueueOffset     int64  `json:"queueOffset"`
			CommitLogOffset int64  `json:"commitLogOffset"`
			Reason          string `json:"reason"`
			DetectedAt      string `json:"detectedAt"`
		} `json:"messages"`
	}
	r = s.do(t, "GET", "/v1/topics/t/corrupt", nil)
	want(t, r, http.StatusOK)
	r.JSON(t, &list)
	if len(list.Messages) != 1 {
		t.Fatalf("corrupt listing %s: want one entry", r.Body)
	}
	c := list.Messages[0]
	if c.MessageID != victimID || c.Topic != "t" || c.QueueID < 0 || c.QueueOffset < 0 ||
		!strings.Contains(c.Reason, "checksum") || c.DetectedAt == "" {
		t.Fatalf("corrupt listing %s: want %s with its place and a checksum reason", r.Body, victimID)
	}
	// …a problem type of its own on GET…
	p := wantProblem(t, s.do(t, "GET", "/v1/topics/t/messages/"+victimID, nil), http.StatusInternalServerError)
	if p.Type != "urn:mqgate:problem:corrupt" || !strings.Contains(p.Detail, "/v1/topics/t/corrupt") {
		t.Fatalf("GET of the corrupt message: %+v", p)
	}
	// …and on /metrics.
	r = s.do(t, "GET", "/metrics", nil)
	want(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `mqgate_store_corrupt_records{topic="t"} 1`) {
		t.Fatalf("/metrics lacks mqgate_store_corrupt_records{topic=\"t\"} 1:\n%s", grepLines(string(r.Body), "corrupt"))
	}
	// Met by the pull (the engine's log line), not by the start-up check.
	if !strings.Contains(s.Logs(), "stored message is corrupt: set aside") {
		t.Fatalf("no log line of the pull setting the record aside:\n%s", grepLines(s.Logs(), "set aside"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
