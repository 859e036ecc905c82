package groups

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Parks are stored per group and key, ids in the order recorded; a park of
// an unknown group is refused, ids for a key not parked are dropped, and
// deleting a group drops its parks in the same transaction.
func TestParksStoredWithTheGroup(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	if _, _, err := r.Put(core.GroupConfig{Name: "g", ConsumeMode: core.Orderly, Subscriptions: []core.Subscription{{Topic: "t"}}}); err != nil {
		t.Fatal(err)
	}
	mq := core.MessageQueue{Topic: "t", QueueID: 3}
	since := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := r.PutPark(t.Context(), "nope", mq, "k", since); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("park of an unknown group: %v", err)
	}
	for _, k := range []string{"k", "k\x00with nul", ""} {
		if err := r.PutPark(t.Context(), "g", mq, k, since); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.PutPark(t.Context(), "g", mq, "k", since.Add(time.Hour)); err != nil { // again: keeps the first
		t.Fatal(err)
	}
	if err := r.AddParkedIDs(t.Context(), "g", mq, "k", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddParkedIDs(t.Context(), "g", mq, "k", []string{"c"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddParkedIDs(t.Context(), "g", mq, "unparked", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	all, err := r.Parks()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Park{}
	for _, p := range all["g"] {
		byKey[p.ShardingKey] = p
	}
	if len(all) != 1 || len(byKey) != 3 {
		t.Fatalf("parks %+v", all)
	}
	if p := byKey["k"]; p.Queue != mq || !p.Since.Equal(since) || !reflect.DeepEqual(p.IDs, []string{"a", "b", "c"}) {
		t.Fatalf("park k %+v", p)
	}
	if p := byKey["k\x00with nul"]; p.Queue != mq || len(p.IDs) != 0 {
		t.Fatalf("park with a NUL in its key %+v", p)
	}
	if err := r.DeletePark(t.Context(), "g", mq, "k"); err != nil {
		t.Fatal(err)
	}
	if all, _ = r.Parks(); len(all["g"]) != 2 {
		t.Fatalf("after resume %+v", all)
	}
	if err := r.Delete("g"); err != nil {
		t.Fatal(err)
	}
	if all, _ = r.Parks(); len(all) != 0 {
		t.Fatalf("a deleted group's parks stay: %+v", all)
	}
}

// The park file of earlier versions is moved into the store and removed;
// a start interrupted after the write (the file still there) migrates
// nothing twice; a deleted group's parks are dropped; an unreadable file
// is an error and stays.
func TestMigrateParkFile(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	if _, _, err := r.Put(core.GroupConfig{Name: "g", ConsumeMode: core.Orderly, Subscriptions: []core.Subscription{{Topic: "t"}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "parked-keys.json")
	const content = `{"g":[{"topic":"t","queueId":1,"shardingKey":"P","since":"2026-01-02T03:04:05Z","messageIds":["m1","m2"]}],` +
		`"gone":[{"topic":"t","queueId":0,"shardingKey":"Q","since":"2026-01-02T03:04:05Z","messageIds":["z"]}]}`
	want := []Park{{Queue: core.MessageQueue{Topic: "t", QueueID: 1}, ShardingKey: "P", Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), IDs: []string{"m1", "m2"}}}
	if n, err := r.MigrateParkFile(file); err != nil || n != 0 {
		t.Fatalf("no file: %d, %v", n, err)
	}
	for round := range 2 { // the second: as if the first had stopped before the removal
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		n, err := r.MigrateParkFile(file)
		if err != nil || n != 1-round {
			t.Fatalf("round %d: migrated %d, %v", round, n, err)
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Fatalf("round %d: the file is still there: %v", round, err)
		}
		all, err := r.Parks()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || !reflect.DeepEqual(all["g"], want) {
			t.Fatalf("round %d: parks %+v, want %+v", round, all, want)
		}
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.MigrateParkFile(file); err == nil {
		t.Fatal("an unreadable park file migrated")
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("an unreadable park file was removed: %v", err)
	}
}
