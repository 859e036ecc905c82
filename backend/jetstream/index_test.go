package jetstream_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Index entries live under mqi.<topic> (names.go indexSubjects), not
// among the queue subjects the consumers filter. A topic stream made
// before that (subjects mq.<topic>.> only, entries under mq.<topic>.i/k)
// gains the subject at its first publish, and its older entries are
// still found by id and by key.
func TestIndexSubjectsAndLegacyEntries(t *testing.T) {
	e := newEnv(t)
	b := e.gws[0].b
	e.topic("idx", 1)
	ctx := context.Background()
	js, _ := jsapi.New(e.gws[0].nc)
	st, err := js.Stream(ctx, "MQ_idx")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if !slices.Contains(cfg.Subjects, "mqi.idx.>") {
		t.Fatalf("new topic stream subjects %v lack mqi.idx.>", cfg.Subjects)
	}
	// Make it an older stream, holding one message indexed the old way.
	cfg.Subjects = []string{"mq.idx.>"}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	old := nats.NewMsg("mq.idx.0")
	old.Data = []byte("old body")
	old.Header.Set("Mq-Id", "OLDID1")
	old.Header.Set("Mq-Keys", `["oldkey"]`)
	if _, err := js.PublishMsg(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "mq.idx.i.OLDID1", []byte("1")); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("oldkey"))
	if _, err := js.Publish(ctx, "mq.idx.k."+hex.EncodeToString(h[:20]), []byte("2")); err != nil {
		t.Fatal(err)
	}
	res, err := b.Put(ctx, "idx", []core.PutMessage{{Body: []byte("new body"), Keys: []string{"newkey"}}})
	if err != nil {
		t.Fatalf("publish on an older stream: %v", err)
	}
	if st, err = js.Stream(ctx, "MQ_idx"); err != nil || !slices.Contains(st.CachedInfo().Config.Subjects, "mqi.idx.>") {
		t.Fatalf("older stream not given mqi.idx.> (%v)", err)
	}
	if m, err := st.GetLastMsgForSubject(ctx, "mqi.idx.i."+res[0].MessageID); err != nil || string(m.Data) != "1" {
		t.Fatalf("new id entry under mqi: %v", err)
	}
	if m, err := b.Message("idx", res[0].MessageID); err != nil || string(m.Body) != "new body" {
		t.Fatalf("lookup of the new message: %v", err)
	}
	if m, err := b.Message("idx", "OLDID1"); err != nil || string(m.Body) != "old body" {
		t.Fatalf("lookup of the message indexed the old way: %v", err)
	}
	if ms, err := b.MessagesByKey("idx", "oldkey", 10); err != nil || len(ms) != 1 || string(ms[0].Body) != "old body" {
		t.Fatalf("by key, indexed the old way: %d, %v", len(ms), err)
	}
	if ms, err := b.MessagesByKey("idx", "newkey", 10); err != nil || len(ms) != 1 || string(ms[0].Body) != "new body" {
		t.Fatalf("by key: %d, %v", len(ms), err)
	}
}
