package groups

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openDB(t *testing.T) *store.Store {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openRegistry(t *testing.T, db *store.Store, opts Options) *Registry {
	t.Helper()
	r, err := OpenWith(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// waitName reads ch until name arrives or the deadline passes.
func waitName(t *testing.T, ch <-chan string, name string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case n := <-ch:
			if n == name {
				return
			}
		case <-deadline:
			t.Fatalf("no notification for %q within %v", name, within)
		}
	}
}

func TestGroupCRUDPersists(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	ch, cancel := r.Watch()
	defer cancel()

	cfg := core.GroupConfig{Name: "g1", Subscriptions: []core.Subscription{{Topic: "orders", Filter: " a || b "}}, MaxReconsumeTimes: 16}
	g, created, err := r.Put(cfg)
	if err != nil || !created {
		t.Fatalf("put: %v created=%v", err, created)
	}
	if g.MessageModel != core.Clustering || g.ConsumeMode != core.Concurrently || g.ConsumeFrom != core.ConsumeFromLastOffset || g.InvisibleSeconds != 60 {
		t.Fatalf("defaults not applied: %+v", g)
	}
	if g.Subscriptions[0].Filter != "a || b" {
		t.Fatalf("filter not normalised: %q", g.Subscriptions[0].Filter)
	}
	waitName(t, ch, "g1", time.Second)

	_, created, err = r.Put(cfg)
	if err != nil || created {
		t.Fatalf("second put: %v created=%v", err, created)
	}
	cfg.ConsumeMode = core.Orderly
	g2, _, err := r.Put(cfg)
	if err != nil || g2.ConsumeMode != core.Orderly || !g2.CreatedAt.Equal(g.CreatedAt) {
		t.Fatalf("update: %v %+v", err, g2)
	}
	waitName(t, ch, "g1", time.Second)

	// A second registry over the same file sees it.
	r2 := openRegistry(t, db, Options{})
	got, err := r2.Get("g1")
	if err != nil || got.ConsumeMode != core.Orderly {
		t.Fatalf("get after reopen: %v %+v", err, got)
	}
	if _, _, err := r.Put(core.GroupConfig{Name: "a0", Subscriptions: []core.Subscription{{Topic: "t"}}}); err != nil {
		t.Fatal(err)
	}
	list, err := r.List()
	if err != nil || len(list) != 2 || list[0].Name != "a0" || list[1].Name != "g1" {
		t.Fatalf("list: %v %+v", err, list)
	}
	mq := core.MessageQueue{Topic: "orders", QueueID: 3}
	if err := r.CommitOffsets("g1", "", map[core.MessageQueue]int64{mq: 42}); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete("g1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("g1"); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("get deleted: %v", err)
	}
	if _, ok, _ := r.CommittedOffset("g1", "", mq); ok {
		t.Fatal("offsets survived group deletion")
	}
	if err := r.Delete("g1"); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestNormalizeRejects(t *testing.T) {
	good := core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t", Filter: "*"}}}
	cases := []struct {
		field string
		mod   func(c *core.GroupConfig)
	}{
		{"name", func(c *core.GroupConfig) { c.Name = "bad name" }},
		{"name", func(c *core.GroupConfig) { c.Name = "" }},
		{"subscriptions", func(c *core.GroupConfig) { c.Subscriptions = nil }},
		{"subscriptions[0].topic", func(c *core.GroupConfig) { c.Subscriptions = []core.Subscription{{Topic: "%RETRY%x"}} }},
		{"subscriptions[1].topic", func(c *core.GroupConfig) {
			c.Subscriptions = []core.Subscription{{Topic: "t"}, {Topic: "t"}}
		}},
		{"subscriptions[0].filter", func(c *core.GroupConfig) { c.Subscriptions = []core.Subscription{{Topic: "t", Filter: "a || "}} }},
		{"messageModel", func(c *core.GroupConfig) { c.MessageModel = "X" }},
		{"consumeMode", func(c *core.GroupConfig) { c.ConsumeMode = "X" }},
		{"consumeFrom.position", func(c *core.GroupConfig) { c.ConsumeFrom = "X" }},
		{"consumeFrom.timestamp", func(c *core.GroupConfig) { c.ConsumeFrom = core.ConsumeFromTimestamp }},
		{"maxReconsumeTimes", func(c *core.GroupConfig) { c.MaxReconsumeTimes = -1 }},
		{"maxReconsumeTimes", func(c *core.GroupConfig) { c.MaxReconsumeTimes = MaxMaxReconsumeTimes + 1 }},
		{"invisibleSeconds", func(c *core.GroupConfig) { c.InvisibleSeconds = 43201 }},
		{"invisibleSeconds", func(c *core.GroupConfig) { c.InvisibleSeconds = -1 }},
		{"push.url", func(c *core.GroupConfig) { c.Push = &core.PushConfig{URL: "ftp://x"} }},
		{"push.maxInFlight", func(c *core.GroupConfig) { c.Push = &core.PushConfig{URL: "https://x/y", MaxInFlight: -1} }},
		{"push.timeoutSeconds", func(c *core.GroupConfig) { c.Push = &core.PushConfig{URL: "https://x/y", TimeoutSeconds: 301} }},
	}
	for _, tc := range cases {
		c := good
		tc.mod(&c)
		_, err := Normalize(c)
		e, ok := err.(*core.Error)
		if !ok || e.Code != core.EInvalid || e.Field != tc.field {
			t.Errorf("%s: got %v", tc.field, err)
		}
	}
	n, err := Normalize(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, Push: &core.PushConfig{URL: "https://h/p"}})
	if err != nil || n.Push.MaxInFlight != DefaultPushMaxInFlight || n.Push.TimeoutSeconds != DefaultPushTimeoutSeconds || n.Subscriptions[0].Filter != "*" {
		t.Fatalf("defaults: %v %+v", err, n)
	}
}

func TestOffsetsAndResets(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	if _, _, err := r.Put(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}}); err != nil {
		t.Fatal(err)
	}
	q0 := core.MessageQueue{Topic: "t", QueueID: 0}
	q1 := core.MessageQueue{Topic: "t", QueueID: 1}
	if _, ok, err := r.CommittedOffset("g", "", q0); ok || err != nil {
		t.Fatalf("fresh offset: ok=%v err=%v", ok, err)
	}
	if err := r.CommitOffsets("g", "", map[core.MessageQueue]int64{q0: 10, q1: 20}); err != nil {
		t.Fatal(err)
	}
	// BROADCASTING offsets are per consumer and independent.
	if err := r.CommitOffsets("g", "c1", map[core.MessageQueue]int64{q0: 5}); err != nil {
		t.Fatal(err)
	}
	if off, ok, _ := r.CommittedOffset("g", "", q0); !ok || off != 10 {
		t.Fatalf("q0 = %d %v", off, ok)
	}
	if off, ok, _ := r.CommittedOffset("g", "c1", q0); !ok || off != 5 {
		t.Fatalf("c1 q0 = %d %v", off, ok)
	}
	all, _ := r.Offsets("g", "")
	if len(all) != 2 || all[q1] != 20 {
		t.Fatalf("offsets: %v", all)
	}

	ch, cancel := r.Watch()
	defer cancel()
	eng := fakeSearcher{queues: 2, min: 3, max: 100, at: 50}
	got, err := r.ResetOffsets(eng, "g", "", "t", core.ConsumeFromTimestamp, time.Now())
	if err != nil || got[q0] != 50 || got[q1] != 50 {
		t.Fatalf("reset: %v %v", err, got)
	}
	waitName(t, ch, "g", time.Second)
	// A consumer's stale in-memory offset must not overwrite the reset.
	if err := r.CommitOffsets("g", "", map[core.MessageQueue]int64{q0: 90, q1: 91}); err != nil {
		t.Fatal(err)
	}
	if off, _, _ := r.CommittedOffset("g", "", q0); off != 50 {
		t.Fatalf("stale commit overwrote reset: %d", off)
	}
	taken := r.TakeResets("g", "", []core.MessageQueue{q0})
	if len(taken) != 1 || taken[q0] != 50 {
		t.Fatalf("take: %v", taken)
	}
	// A client that took the reset writes with the reset's epoch.
	p0, _, _ := r.CommittedProgress("g", "", q0)
	if err := r.CommitProgress(t.Context(), "g", 0, "", map[core.MessageQueue]core.Progress{
		q0: {Offset: 51, Epoch: p0.Epoch}, q1: {Offset: 92}}); err != nil {
		t.Fatal(err)
	}
	if off, _, _ := r.CommittedOffset("g", "", q0); off != 51 {
		t.Fatalf("after take: q0 = %d", off)
	}
	if off, _, _ := r.CommittedOffset("g", "", q1); off != 50 {
		t.Fatalf("q1 reset still pending, got %d", off)
	}
	if got, _ := r.ResetOffsets(eng, "g", "", "t", core.ConsumeFromFirstOffset, time.Time{}); got[q1] != 3 {
		t.Fatalf("first: %v", got)
	}
	if got, _ := r.ResetOffsets(eng, "g", "", "t", core.ConsumeFromLastOffset, time.Time{}); got[q1] != 100 {
		t.Fatalf("last: %v", got)
	}
	if _, err := r.ResetOffsets(eng, "nope", "", "t", core.ConsumeFromLastOffset, time.Time{}); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("unknown group: %v", err)
	}
}

type fakeSearcher struct{ queues, min, max, at int }

func (f fakeSearcher) Topic(name string) (core.Topic, error) {
	return core.Topic{TopicConfig: core.TopicConfig{Name: name, Queues: f.queues}}, nil
}
func (f fakeSearcher) QueueOffsets(core.MessageQueue) (int64, int64, error) {
	return int64(f.min), int64(f.max), nil
}
func (f fakeSearcher) SearchOffset(core.MessageQueue, time.Time) (int64, error) {
	return int64(f.at), nil
}

func TestClientsExpireByTimer(t *testing.T) {
	r := openRegistry(t, openDB(t), Options{ClientTimeout: 150 * time.Millisecond})
	ch, cancel := r.Watch()
	defer cancel()
	now := time.Now()
	r.Heartbeat("g", "b", now)
	r.Heartbeat("g", "a", now)
	waitName(t, ch, "g", time.Second)
	if got := r.Clients("g"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("clients: %v", got)
	}
	q := core.MessageQueue{Topic: "t", QueueID: 0}
	if !r.LockQueue("g", "a", q, now) {
		t.Fatal("lock a")
	}
	// Keep b alive; a falls silent and must expire by itself.
	stop := time.After(400 * time.Millisecond)
	tick := time.NewTicker(30 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-tick.C:
			r.Heartbeat("g", "b", time.Now())
		case <-stop:
			break loop
		}
	}
	if got := r.Clients("g"); len(got) != 1 || got[0] != "b" {
		t.Fatalf("after expiry: %v", got)
	}
	// a's lock went with it.
	if !r.LockQueue("g", "b", q, time.Now()) {
		t.Fatal("lock of an expired client not freed")
	}
	r.Unregister("g", "b")
	if got := r.Clients("g"); len(got) != 0 {
		t.Fatalf("after unregister: %v", got)
	}
}

func TestQueueLocks(t *testing.T) {
	r := openRegistry(t, openDB(t), Options{LockTTL: time.Minute})
	now := time.Now()
	r.Heartbeat("g", "a", now)
	r.Heartbeat("g", "b", now)
	q := core.MessageQueue{Topic: "t", QueueID: 1}
	if !r.LockQueue("g", "a", q, now) || !r.LockQueue("g", "a", q, now.Add(time.Second)) {
		t.Fatal("a locks and renews")
	}
	if r.LockQueue("g", "b", q, now.Add(2*time.Second)) {
		t.Fatal("b took a live lock")
	}
	if !r.LockQueue("g", "b", q, now.Add(62*time.Second)) {
		t.Fatal("b cannot take an expired lock")
	}
	if h, ok := r.LockHolder("g", q, now.Add(63*time.Second)); !ok || h != "b" {
		t.Fatalf("holder %q %v", h, ok)
	}
	ch, cancel := r.Watch()
	defer cancel()
	r.UnlockQueue("g", "a", q) // not the holder: no effect
	if h, _ := r.LockHolder("g", q, now.Add(63*time.Second)); h != "b" {
		t.Fatal("unlock by non-holder")
	}
	r.UnlockQueue("g", "b", q)
	waitName(t, ch, "g", time.Second)
	if !r.LockQueue("g", "a", q, now.Add(64*time.Second)) {
		t.Fatal("a after unlock")
	}
}

// TestStoredIncarnation: the incarnation read alone from a stored group
// is the one the whole decode finds, and a damaged record is an error.
func TestStoredIncarnation(t *testing.T) {
	for _, inc := range []uint64{0, 1, 1 << 40} {
		b, err := encodeGroup(core.Group{GroupConfig: core.GroupConfig{Name: "g", Incarnation: inc,
			Subscriptions: []core.Subscription{{Topic: "t", Filter: "*"}}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := storedIncarnation(b)
		if err != nil || got != inc {
			t.Fatalf("storedIncarnation = %d, %v; want %d", got, err, inc)
		}
		if g, _ := decodeGroup(b); g.Incarnation != got {
			t.Fatalf("decodeGroup says %d, storedIncarnation %d", g.Incarnation, got)
		}
	}
	if _, err := storedIncarnation([]byte(`{"incarnation":`)); err == nil {
		t.Fatal("a cut record decoded")
	}
}
