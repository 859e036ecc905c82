package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// syncHold holds the store's syncs of one kind (0: of every kind) once
// armed, until released (store.Options.SyncHook): the window between a
// group's bbolt commit and its durability, held open. Each held sync is
// announced on entered with a channel that lets that one go; open lets
// every one go, for good.
type syncHold struct {
	kind             store.SyncKind
	armed, release   chan struct{}
	entered          chan chan struct{}
	armOnce, relOnce sync.Once
}

func newSyncHold(kind store.SyncKind) *syncHold {
	return &syncHold{kind: kind, armed: make(chan struct{}), release: make(chan struct{}), entered: make(chan chan struct{}, 64)}
}

func (h *syncHold) arm()  { h.armOnce.Do(func() { close(h.armed) }) }
func (h *syncHold) open() { h.relOnce.Do(func() { close(h.release) }) }

func (h *syncHold) hook(k store.SyncKind) {
	if h.kind != 0 && k != h.kind {
		return
	}
	select {
	case <-h.armed:
	default:
		return
	}
	one := make(chan struct{})
	h.entered <- one
	select {
	case <-one:
	case <-h.release:
	}
}

// holdUntil lets held syncs go one by one until cond holds while one is
// held: from then on every sync waits for open.
func (h *syncHold) holdUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for {
		select {
		case one := <-h.entered:
			if cond() {
				return
			}
			close(one)
		case <-time.After(10 * time.Second):
			t.Fatal("no held sync found the state looked for")
		}
	}
}

func stillWaiting[T any](t *testing.T, ch <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s answered before what it read was durable: %+v", what, v)
	case <-time.After(d):
	}
}

func answered[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not answer once durable", what)
		panic("unreachable")
	}
}

// quiet waits for the cleaner's first pass, which may run an Update and
// so a checkpoint: a held sync must be the one a test is about.
func quiet(t *testing.T, e *Engine) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); e.RetentionStats().Passes == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the cleaner's first pass did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dedupCommitted reports whether topic's idempotency record for key is
// in bbolt, durable or not (a look-up past the read barrier).
func dedupCommitted(t *testing.T, e *Engine, topic, key string) bool {
	var found bool
	if err := e.st.View(func(tx store.ReadTx) error {
		found = tx.BucketUnsynced(bucketDedup).Get(dedupKey(topic, key)) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

// topicCommitted reports whether topic is in bbolt, durable or not.
func topicCommitted(t *testing.T, e *Engine, topic string) bool {
	var found bool
	if err := e.st.View(func(tx store.ReadTx) error {
		found = tx.TopicCommitted(topic)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

type putAnswer struct {
	res []core.PutResult
	err error
}

// TestIdempotentRetryWaitsForDurability: a retry that arrives while the
// original publish is committed to bbolt but its log-ahead record is not
// yet synced must not be answered "replayed" until the original is
// durable: a power cut in that window would lose a message the retry was
// told is stored. Without the read barrier the retry answers at once.
func TestIdempotentRetryWaitsForDurability(t *testing.T) {
	h := newSyncHold(0)
	e := openTest(t, Options{syncHook: h.hook})
	t.Cleanup(h.open) // before the engine's Close
	mustTopic(t, e, "orders", 2)
	quiet(t, e)
	h.arm()
	put := func(ch chan<- putAnswer) {
		res, err := e.Put(t.Context(), "orders", []core.PutMessage{keyed("a", "k1")})
		ch <- putAnswer{res, err}
	}
	first := make(chan putAnswer, 1)
	go put(first)
	// The original's group is in bbolt and every sync is held (a
	// checkpoint would make it durable as well as the log's fdatasync).
	h.holdUntil(t, func() bool { return dedupCommitted(t, e, "orders", "k1") })
	retry := make(chan putAnswer, 1)
	go put(retry)
	stillWaiting(t, retry, 300*time.Millisecond, "the retry")
	stillWaiting(t, first, 0, "the original")
	h.open()
	a, b := answered(t, first, "the original"), answered(t, retry, "the retry")
	if a.err != nil || b.err != nil {
		t.Fatalf("original %v, retry %v", a.err, b.err)
	}
	if a.res[0].Replayed || !b.res[0].Replayed || a.res[0].MessageID != b.res[0].MessageID {
		t.Fatalf("original %+v, retry %+v: want the retry to replay the original", a.res[0], b.res[0])
	}
	if n := topicMessages(t, e, "orders"); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
}

// TestTopicGetWaitsForCreate: a GET of a topic whose creation is
// committed to bbolt but whose checkpoint has not synced the file yet
// waits for it, instead of reporting a topic a power cut would lose.
func TestTopicGetWaitsForCreate(t *testing.T) {
	h := newSyncHold(store.SyncCheckpoint)
	e := openTest(t, Options{syncHook: h.hook})
	t.Cleanup(h.open)
	quiet(t, e)
	h.arm()
	created := make(chan error, 1)
	go func() { _, _, err := e.PutTopic(core.TopicConfig{Name: "fresh", Queues: 2}); created <- err }()
	// Hold the create's checkpoint, not a background write's (a cleaner
	// or sweep chunk): a GET started behind another write's sync reads
	// the store before the create commits and rightly says not found.
	h.holdUntil(t, func() bool { return topicCommitted(t, e, "fresh") })
	got := make(chan error, 1)
	go func() { _, err := e.Topic("fresh"); got <- err }()
	listed := make(chan int, 1)
	go func() { ts, _ := e.Topics(); listed <- len(ts) }()
	stillWaiting(t, got, 300*time.Millisecond, "GET of the topic")
	stillWaiting(t, listed, 0, "the topic list")
	h.open()
	if err := answered(t, got, "GET of the topic"); err != nil {
		t.Fatalf("GET once durable: %v", err)
	}
	if n := answered(t, listed, "the topic list"); n != 1 {
		t.Fatalf("%d topics listed, want 1", n)
	}
	if err := answered(t, created, "the create"); err != nil {
		t.Fatal(err)
	}
}

// TestIdempotentFreshKeyPlansWithoutWaiting: while one idempotent
// publish's sync is held, planning a publish with another key does not
// wait for it (a key not found is looked up again in the group commit),
// and planning a retry of the held one does.
func TestIdempotentFreshKeyPlansWithoutWaiting(t *testing.T) {
	h := newSyncHold(0)
	e := openTest(t, Options{syncHook: h.hook})
	t.Cleanup(h.open)
	mustTopic(t, e, "orders", 2)
	quiet(t, e)
	uid := e.cachedTopic("orders").rec.UID
	h.arm()
	first := make(chan putAnswer, 1)
	go func() {
		res, err := e.Put(t.Context(), "orders", []core.PutMessage{keyed("a", "k1")})
		first <- putAnswer{res, err}
	}()
	h.holdUntil(t, func() bool { return dedupCommitted(t, e, "orders", "k1") })
	plan := func(key string) <-chan *dedupPlan {
		ch := make(chan *dedupPlan, 1)
		go func() {
			p, err := e.planDedup("orders", uid, []core.PutMessage{keyed("a", key)}, time.Now())
			if err != nil {
				t.Error(err)
			}
			ch <- p
		}()
		return ch
	}
	if p := answered(t, plan("k2"), "planning a fresh key"); len(p.fresh) != 1 {
		t.Fatalf("fresh key planned %+v", p)
	}
	retry := plan("k1")
	stillWaiting(t, retry, 300*time.Millisecond, "planning the retry")
	h.open()
	if p := answered(t, retry, "planning the retry"); len(p.replay) != 1 {
		t.Fatalf("retry planned %+v, want a replay", p)
	}
	if a := answered(t, first, "the original"); a.err != nil {
		t.Fatal(a.err)
	}
}
