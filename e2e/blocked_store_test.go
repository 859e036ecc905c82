package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Parked keys live in the store (issue 23 item 7): they survive kill -9
// around a park, travel with `mqgate backup` and a restore, and the
// parked-keys.json of earlier versions is moved into the store at start.

// orderlyGroup creates topic ord (one queue) and the ORDERLY group name
// reading it from the first offset; false when the binary has no gateway.
func orderlyGroup(t *testing.T, s *server, name string) bool {
	t.Helper()
	want(t, s.do(t, "PUT", "/v1/topics/ord", map[string]any{"queues": 1}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/"+name, map[string]any{
		"subscriptions": []map[string]any{{"topic": "ord"}}, "consumeMode": "ORDERLY",
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		return false
	}
	want(t, r, http.StatusCreated)
	return true
}

func pubKey(t *testing.T, s *server, body, key string) {
	t.Helper()
	want(t, s.do(t, "POST", "/v1/topics/ord/messages", map[string]any{"body": body, "shardingKey": key}), http.StatusCreated)
}

// parkedCount is the number of messages parked under key P, -1 when P is
// not parked.
func parkedCount(t *testing.T, s *server, group string) int {
	t.Helper()
	for _, e := range blockedList(t, s, group) {
		if e.ShardingKey == "P" && e.State == "PARKED" {
			return e.Attempts
		}
	}
	return -1
}

// TestParkedKeysSurviveKillAndBackup: a park answered is stored (kill -9
// right after it keeps it); every parked message's id is stored before its
// dead letter (kill -9 once they are all dead letters keeps all the ids);
// a backup taken through the running server holds the parks, and a server
// started on the restored copy resumes them in order.
func TestParkedKeysSurviveKillAndBackup(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	if !orderlyGroup(t, s, "pk") {
		t.Skip("this binary has no gateway wired")
	}
	if got := blockedAction(t, s, "pk", "park", "P"); got.State != "PARKED" {
		t.Fatalf("park answered %+v", got)
	}
	s.kill()
	s = startServer(t, dir)
	if n := parkedCount(t, s, "pk"); n != 0 {
		t.Fatalf("after kill -9 right after the park: parked %d, want P PARKED with 0", n)
	}

	const parked = 5
	for i := 1; i <= parked; i++ {
		pubKey(t, s, fmt.Sprint("p", i), "P")
	}
	pubKey(t, s, "a1", "A")
	receiveAck(t, s, "pk", "a1")
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if got := dlqBodies(t, s, "pk"); len(got) != parked {
			return fmt.Errorf("dlq %v, want %d dead letters", got, parked)
		}
		return nil
	})
	// a1's ack is written with the next group commit: wait for it, so a1
	// is not delivered again after the kill (acks within that window may
	// be, as documented).
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		var offs struct {
			Offsets []struct {
				Topic           string
				CommittedOffset int64
			}
		}
		s.do(t, "GET", "/v1/groups/pk/offsets", nil).JSON(t, &offs)
		for _, o := range offs.Offsets {
			if o.Topic == "ord" && o.CommittedOffset != parked+1 {
				return fmt.Errorf("committed %d", o.CommittedOffset)
			}
		}
		return nil
	})
	s.kill() // at once: the ids were stored before the dead letters
	s = startServer(t, dir)
	if n := parkedCount(t, s, "pk"); n != parked {
		t.Fatalf("after kill -9: parked %d, want %d", n, parked)
	}
	if _, err := os.Stat(filepath.Join(dir, "parked-keys.json")); !os.IsNotExist(err) {
		t.Fatalf("a parked-keys.json was written: %v", err)
	}

	file := filepath.Join(t.TempDir(), "backup.db")
	if out, err := runBinary(t, 120*time.Second, "backup", "--url", s.base, "--out", file); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("backup: %v %s", err, out)
	}
	s.stop(t)
	dst := t.TempDir()
	if err := os.Rename(file, filepath.Join(dst, "mqgate.db")); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dst)
	if n := parkedCount(t, s, "pk"); n != parked {
		t.Fatalf("restored from the backup: parked %d, want %d", n, parked)
	}
	if got := blockedAction(t, s, "pk", "resume", "P"); got.State != "RESUMED" {
		t.Fatalf("resume answered %+v", got)
	}
	for i := 1; i <= parked; i++ {
		receiveAck(t, s, "pk", fmt.Sprint("p", i))
	}
	if got := blockedList(t, s, "pk"); len(got) != 0 {
		t.Fatalf("blocked after resume: %+v", got)
	}
}

// TestParkedKeysMigrateFromFile: the parked-keys.json an earlier version
// wrote is read at start, written to the store and removed; the park
// holds (and survives kill -9 with the file gone); a park of a group that
// no longer exists is dropped; a group deleted and created again starts
// with no parks.
func TestParkedKeysMigrateFromFile(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	if !orderlyGroup(t, s, "mg") {
		t.Skip("this binary has no gateway wired")
	}
	var res struct {
		MessageID string `json:"messageId"`
	}
	r := s.do(t, "POST", "/v1/topics/ord/messages", map[string]any{"body": "p1", "shardingKey": "P"})
	want(t, r, http.StatusCreated)
	r.JSON(t, &res)
	s.stop(t)
	// As an earlier version left it: P parked with one id recorded (its
	// dead letter is not there: resume releases only what is).
	file := filepath.Join(dir, "parked-keys.json")
	content := `{"mg":[{"topic":"ord","queueId":0,"shardingKey":"P","since":"2026-01-02T03:04:05Z","messageIds":["` + res.MessageID + `"]}],` +
		`"gone":[{"topic":"ord","queueId":0,"shardingKey":"Q","since":"2026-01-02T03:04:05Z","messageIds":[]}]}`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, dir)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("parked-keys.json is still there after the start: %v", err)
	}
	// p1 is already recorded: parking it again adds no second id.
	pubKey(t, s, "a1", "A")
	receiveAck(t, s, "mg", "a1")
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if got := dlqBodies(t, s, "mg"); !slices.Equal(got, []string{"p1"}) {
			return fmt.Errorf("dlq %v, want [p1]", got)
		}
		return nil
	})
	s.kill()
	s = startServer(t, dir)
	got := blockedList(t, s, "mg")
	if len(got) != 1 || got[0].State != "PARKED" || got[0].Attempts != 1 || got[0].MessageID != res.MessageID || got[0].Since != "2026-01-02T03:04:05.000Z" {
		t.Fatalf("after the migration and kill -9: %+v, want P PARKED since 2026-01-02T03:04:05Z with %s", got, res.MessageID)
	}
	want(t, s.do(t, "PUT", "/v1/groups/gone", map[string]any{"subscriptions": []map[string]any{{"topic": "ord"}}, "consumeMode": "ORDERLY"}), http.StatusCreated)
	if got := blockedList(t, s, "gone"); len(got) != 0 {
		t.Fatalf("a deleted group's park came back: %+v", got)
	}

	// Deleting the group drops its parks; created again, it has none.
	want(t, s.do(t, "DELETE", "/v1/groups/mg", nil), http.StatusNoContent)
	want(t, s.do(t, "PUT", "/v1/groups/mg", map[string]any{"subscriptions": []map[string]any{{"topic": "ord"}}, "consumeMode": "ORDERLY",
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}), http.StatusCreated)
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := blockedList(t, s, "mg"); len(got) != 0 {
			return fmt.Errorf("the new group has %+v", got)
		}
		return nil
	})
	s.stop(t)
	s = startServer(t, dir)
	if got := blockedList(t, s, "mg"); len(got) != 0 {
		t.Fatalf("the new group after a restart has %+v", got)
	}
	receiveAck(t, s, "mg", "p1") // not parked: delivered
}
