package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/limitstest"
	"github.com/mqgate/mqgate/core/store"
)

func TestPutAndReadBack(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "orders", 4)
	in := core.PutMessage{Body: []byte{0, 1, 2, 0xff}, Tags: "created", Keys: []string{"order-17", "customer-9"},
		Properties: map[string]string{"region": "eu"}}
	before := time.Now().Add(-time.Millisecond)
	res := mustPut(t, e, "orders", in)[0]
	if len(res.MessageID) == 0 || len(res.MessageID) > core.MaxIDLength || strings.ContainsAny(res.MessageID, "/?#%+=") {
		t.Fatalf("message id %q is not opaque and URL-safe", res.MessageID)
	}
	if res.Topic != "orders" || res.QueueOffset != 0 || res.StoredAt.Before(before) {
		t.Fatalf("result %+v", res)
	}
	mq := core.MessageQueue{Topic: "orders", QueueID: res.QueueID}
	got, err := e.GetMessages(mq, 0, 10, core.MatchAll)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.Found || len(got.Messages) != 1 || got.NextOffset != 1 || got.MaxOffset != 1 {
		t.Fatalf("GetMessages: %+v", got)
	}
	m := got.Messages[0]
	if m.ID != res.MessageID || !bytes.Equal(m.Body, in.Body) || m.BodyIsText || m.Tags != "created" ||
		m.Properties["region"] != "eu" || len(m.Keys) != 2 || m.Topic != "orders" || m.QueueID != res.QueueID ||
		!m.StoredAt.Equal(res.StoredAt) || m.BornAt.After(m.StoredAt) || m.BornAt.Before(before.Truncate(time.Millisecond)) {
		t.Fatalf("message read back %+v", m)
	}
	byID, err := e.Message("orders", res.MessageID)
	if err != nil || !bytes.Equal(byID.Body, in.Body) {
		t.Fatalf("Message by id: %v %+v", err, byID)
	}
	_, err = e.Message("orders", "nope")
	wantCode(t, err, core.ENotFound)
	mustTopic(t, e, "other", 1)
	_, err = e.Message("other", res.MessageID)
	wantCode(t, err, core.ENotFound)

	mustPut(t, e, "orders", core.PutMessage{Body: []byte("second"), Keys: []string{"order-17"}})
	byKey, err := e.MessagesByKey("orders", "order-17", 10)
	if err != nil || len(byKey) != 2 || byKey[0].ID != res.MessageID || string(byKey[1].Body) != "second" {
		t.Fatalf("MessagesByKey: %v %d", err, len(byKey))
	}
	if byKey, _ := e.MessagesByKey("other", "order-17", 10); len(byKey) != 0 {
		t.Fatalf("key index leaks across topics: %d", len(byKey))
	}
	at, err := e.MessageAt(m.CommitLogOffset)
	if err != nil || at.ID != m.ID {
		t.Fatalf("MessageAt: %v", err)
	}
	_, err = e.MessageAt(1 << 40)
	wantCode(t, err, core.ENotFound)
}

func TestTopicsCRUD(t *testing.T) {
	e := openTest(t, Options{})
	top, created, err := e.PutTopic(core.TopicConfig{Name: "a"})
	if err != nil || !created || top.Queues != core.DefaultQueues || top.RetentionHours != core.DefaultRetentionHours || top.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v %v", top, created, err)
	}
	top2, created, err := e.PutTopic(core.TopicConfig{Name: "a", Queues: 12})
	if err != nil || created || top2.Queues != 12 || !top2.CreatedAt.Equal(top.CreatedAt) || top2.RetentionHours != core.DefaultRetentionHours {
		t.Fatalf("update: %+v %v %v", top2, created, err)
	}
	_, _, err = e.PutTopic(core.TopicConfig{Name: "a", Queues: 4})
	wantCode(t, err, core.EConflict)
	_, _, err = e.PutTopic(core.TopicConfig{Name: "bad name"})
	wantCode(t, err, core.EInvalid)
	_, _, err = e.PutTopic(core.TopicConfig{Name: "x", Queues: 257})
	wantCode(t, err, core.EInvalid)
	_, _, err = e.PutTopic(core.TopicConfig{Name: "%RETRY%g"})
	wantCode(t, err, core.EInvalid) // not a valid name in the first place
	mustTopic(t, e, "b", 1)
	list, err := e.Topics()
	if err != nil || len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
		t.Fatalf("Topics: %v %+v", err, list)
	}
	mustPut(t, e, "a", text("x"), text("y"))
	st, err := e.TopicStats("a")
	if err != nil || st.Messages != 2 || len(st.Queues) != 12 {
		t.Fatalf("stats %+v %v", st, err)
	}
	_, err = e.Topic("zzz")
	wantCode(t, err, core.ENotFound)
	if rt, err := e.Topic(core.RetryTopic("g")); err != nil || rt.Queues != 1 {
		t.Fatalf("retry topic before creation: %+v %v", rt, err)
	}
}

func TestPutValidation(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	ctx := t.Context()
	_, err := e.Put(ctx, "%DLQ%g", []core.PutMessage{text("x")})
	wantCode(t, err, core.EForbidden)
	_, err = e.Put(ctx, core.ScheduleTopic, []core.PutMessage{text("x")})
	wantCode(t, err, core.EForbidden)
	_, err = e.Put(ctx, "missing", []core.PutMessage{text("x")})
	wantCode(t, err, core.ENotFound)
	_, err = e.Put(ctx, "t", []core.PutMessage{{Body: make([]byte, core.MaxMessageSize+1)}})
	wantCode(t, err, core.ETooLarge)
	_, err = e.Put(ctx, "t", make([]core.PutMessage, core.MaxBatch+1))
	wantCode(t, err, core.EInvalid) // as the API answers it: 400
	_, err = e.Put(ctx, "t", nil)
	wantCode(t, err, core.EInvalid)
	// One bad message fails the whole batch and stores nothing.
	_, err = e.Put(ctx, "t", []core.PutMessage{text("ok"), {Body: []byte("x"), Keys: []string{""}}})
	wantCode(t, err, core.EInvalid)
	var fe *core.Error
	if !errors.As(err, &fe) || fe.Field != "messages[1].keys[0]" { // the element, as the API names it
		t.Fatalf("field error %+v", fe)
	}
	_, err = e.Put(ctx, "t", []core.PutMessage{{Body: []byte("x"), DelayLevel: -1}})
	wantCode(t, err, core.EInvalid)
	if st, _ := e.TopicStats("t"); st.Messages != 0 {
		t.Fatalf("rejected publishes stored %d messages", st.Messages)
	}
}

func TestBatchIsContiguousAndShardingKeyIsStable(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 8)
	batch := make([]core.PutMessage, 50)
	for i := range batch {
		batch[i] = text(fmt.Sprint(i))
	}
	res := mustPut(t, e, "t", batch...)
	for i, r := range res {
		if r.QueueID != res[0].QueueID || r.QueueOffset != int64(i) {
			t.Fatalf("batch result %d: %+v", i, r)
		}
	}
	// Round-robin moves on for the next unkeyed publish.
	if r := mustPut(t, e, "t", text("next"))[0]; r.QueueID == res[0].QueueID {
		t.Fatalf("round robin stayed on queue %d", r.QueueID)
	}
	queues := map[string]int{}
	for i := range 100 {
		key := fmt.Sprintf("customer-%d", i%7)
		r := mustPut(t, e, "t", core.PutMessage{Body: []byte("x"), ShardingKey: key})[0]
		if q, ok := queues[key]; ok && q != r.QueueID {
			t.Fatalf("sharding key %s moved from queue %d to %d", key, q, r.QueueID)
		}
		queues[key] = r.QueueID
	}
}

func TestGetMessagesStatusesAndFilter(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	mq := core.MessageQueue{Topic: "t"}
	r, err := e.GetMessages(mq, 0, 10, core.MatchAll)
	if err != nil || r.Status != core.NoNewMsg || r.NextOffset != 0 {
		t.Fatalf("empty queue: %+v %v", r, err)
	}
	r, _ = e.GetMessages(mq, 3, 10, core.MatchAll)
	if r.Status != core.OffsetIllegal || r.NextOffset != 0 {
		t.Fatalf("beyond empty queue: %+v", r)
	}
	for i := range 10 {
		tag := "a"
		if i%3 == 0 {
			tag = "b"
		}
		mustPut(t, e, "t", core.PutMessage{Body: []byte(fmt.Sprint(i)), Tags: tag})
	}
	fb, _ := core.ParseFilter("b")
	r, _ = e.GetMessages(mq, 0, 10, fb)
	if r.Status != core.Found || len(r.Messages) != 4 || r.NextOffset != 10 {
		t.Fatalf("filter b: %v %d next %d", r.Status, len(r.Messages), r.NextOffset)
	}
	for _, m := range r.Messages {
		if m.Tags != "b" {
			t.Fatalf("filter let through tag %q", m.Tags)
		}
	}
	r, _ = e.GetMessages(mq, 1, 1, fb)
	if r.Status != core.Found || r.Messages[0].QueueOffset != 3 || r.NextOffset != 4 {
		t.Fatalf("max 1: %+v", r)
	}
	fc, _ := core.ParseFilter("c || d")
	r, _ = e.GetMessages(mq, 0, 10, fc)
	if r.Status != core.NoMatchedMsg || r.NextOffset != 10 {
		t.Fatalf("no match: %+v", r)
	}
	r, _ = e.GetMessages(mq, 10, 10, core.MatchAll)
	if r.Status != core.NoNewMsg || r.NextOffset != 10 || r.MaxOffset != 10 {
		t.Fatalf("at max: %+v", r)
	}
	r, _ = e.GetMessages(mq, 11, 10, core.MatchAll)
	if r.Status != core.OffsetIllegal || r.NextOffset != 10 {
		t.Fatalf("beyond max: %+v", r)
	}
	_, err = e.GetMessages(core.MessageQueue{Topic: "t", QueueID: 1}, 0, 1, core.MatchAll)
	wantCode(t, err, core.ENotFound)
	_, err = e.GetMessages(core.MessageQueue{Topic: "nope"}, 0, 1, core.MatchAll)
	wantCode(t, err, core.ENotFound)
	r, err = e.GetMessages(core.MessageQueue{Topic: core.RetryTopic("g")}, 0, 32, core.MatchAll)
	if err != nil || r.Status != core.NoNewMsg || r.MinOffset != 0 || r.MaxOffset != 0 {
		t.Fatalf("missing retry topic: %+v %v", r, err)
	}
}

func TestSystemTopicPutPrimitive(t *testing.T) {
	e := openTest(t, Options{})
	retry := core.RetryTopic("g")
	msg := &core.Message{ID: newID(time.Now()), Body: []byte("again"), ReconsumeTimes: 1,
		SysProps: map[string]string{core.PropRetryTopic: "orders", core.PropOriginMessageID: "orig"}}
	wake := e.Arrival(core.MessageQueue{Topic: retry}, 0)
	hookRan := false
	err := e.commit(t.Context(), []putOp{{topic: retry, queueID: 0, msg: msg}}, func(tx store.Tx) error {
		hookRan = true
		return nil
	})
	if err != nil || !hookRan {
		t.Fatalf("commit: %v hook %v", err, hookRan)
	}
	<-wake
	r, err := e.GetMessages(core.MessageQueue{Topic: retry}, 0, 32, core.MatchAll)
	if err != nil || r.Status != core.Found || r.Messages[0].UserID() != "orig" || r.Messages[0].UserTopic() != "orders" || r.Messages[0].ReconsumeTimes != 1 {
		t.Fatalf("retry read: %+v %v", r, err)
	}
	if list, _ := e.Topics(); len(list) != 0 {
		t.Fatalf("system topic listed: %+v", list)
	}
	// A failing hook fails its request and stores nothing.
	boom := errors.New("boom")
	err = e.commit(t.Context(), []putOp{{topic: retry, msg: &core.Message{ID: newID(time.Now()), Body: []byte("x")}}},
		func(store.Tx) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("hook error: %v", err)
	}
	if _, max, _ := e.QueueOffsets(core.MessageQueue{Topic: retry}); max != 1 {
		t.Fatalf("failed commit left max offset %d", max)
	}
	if err := e.DeleteSystemTopic(retry); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteSystemTopic(retry); err != nil {
		t.Fatal("deleting an absent system topic:", err)
	}
	wantCode(t, e.DeleteSystemTopic("orders"), core.EInvalid)
	wantCode(t, e.DeleteTopic(retry), core.EForbidden)
}

// TestFailingRequestDoesNotFailItsGroup runs many publishers while some
// requests carry a failing hook: every other request must succeed, whatever
// group it shared with a failing one.
func TestFailingRequestDoesNotFailItsGroup(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := range 20 {
		wg.Go(func() {
			for i := range 20 {
				var hook store.Hook
				if (g+i)%5 == 0 {
					hook = func(store.Tx) error { return boom }
				}
				err := e.commit(context.Background(), []putOp{{topic: "t", queueID: i % 2,
					msg: &core.Message{ID: newID(time.Now()), Body: []byte("x")}}}, hook)
				if hook != nil && !errors.Is(err, boom) || hook == nil && err != nil {
					errs <- fmt.Errorf("g%d i%d: %v", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st, _ := e.TopicStats("t"); st.Messages != 320 {
		t.Fatalf("stored %d messages, want 320", st.Messages)
	}
}

func TestArrivalWakesOnPublishOnly(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	mq := core.MessageQueue{Topic: "t", QueueID: 1}
	ch := e.Arrival(mq, 0)
	// A publish to the other queue must not wake this one.
	mustPut(t, e, "t", core.PutMessage{Body: []byte("x"), ShardingKey: keyForQueue(t, 2, 0)})
	select {
	case <-ch:
		t.Fatal("arrival fired without a message on its queue")
	case <-time.After(30 * time.Millisecond):
	}
	start := time.Now()
	go func() {
		_, _ = e.Put(context.Background(), "t", []core.PutMessage{{Body: []byte("y"), ShardingKey: keyForQueue(t, 2, 1)}})
	}()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("arrival did not fire after a publish")
	}
	t.Logf("woken %v after publish started", time.Since(start))
	select {
	case <-e.Arrival(mq, 0):
	default:
		t.Fatal("arrival for an offset below max is not closed")
	}
	// Deleting the topic wakes waiters; so does Close.
	ch = e.Arrival(mq, 1)
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	<-ch
	ch = e.Arrival(core.MessageQueue{Topic: core.RetryTopic("g")}, 0)
	e.Close()
	<-ch
}

// keyForQueue finds a sharding key that maps to queue q of n.
func keyForQueue(t testing.TB, n, q int) string {
	for i := range 1000 {
		k := fmt.Sprint("k", i)
		if int(fnv32a(k)%uint32(n)) == q {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

func TestConcurrentPublishersGaplessOffsets(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 4)
	publishers, per := 32, 60
	if testing.Short() {
		per = 20
	}
	var mu sync.Mutex
	seen := map[core.MessageQueue]map[int64]string{}
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range per {
				msgs := []core.PutMessage{text(fmt.Sprintf("p%d-%d", p, i))}
				if i%4 == 0 {
					msgs = append(msgs, text(fmt.Sprintf("p%d-%d-b", p, i)))
				}
				res, err := e.Put(context.Background(), "t", msgs)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for j, r := range res {
					mq := core.MessageQueue{Topic: "t", QueueID: r.QueueID}
					if seen[mq] == nil {
						seen[mq] = map[int64]string{}
					}
					if prev, dup := seen[mq][r.QueueOffset]; dup {
						t.Errorf("offset %d of %v given twice (%s, %s)", r.QueueOffset, mq, prev, msgs[j].Body)
					}
					seen[mq][r.QueueOffset] = string(msgs[j].Body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for mq, offs := range seen {
		total += len(offs)
		r, err := e.GetMessages(mq, 0, len(offs)+1, core.MatchAll)
		if err != nil {
			t.Fatal(err)
		}
		if r.MaxOffset != int64(len(offs)) || len(r.Messages) != len(offs) && len(r.Messages) < maxScanUnits {
			t.Fatalf("%v: max %d, read %d, published %d", mq, r.MaxOffset, len(r.Messages), len(offs))
		}
		for off := range int64(len(offs)) {
			body, ok := offs[off]
			if !ok {
				t.Fatalf("%v: gap at offset %d", mq, off)
			}
			if int(off) < len(r.Messages) && string(r.Messages[off].Body) != body {
				t.Fatalf("%v offset %d: read %q, published %q", mq, off, r.Messages[off].Body, body)
			}
		}
	}
	if want := publishers * (per + per/4); total != want {
		t.Fatalf("published %d, want %d", total, want)
	}
}

func TestReopenPersistsEverything(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 3)
	var ids []string
	for i := range 30 {
		r := mustPut(t, e, "t", core.PutMessage{Body: []byte(fmt.Sprint("m", i)), Keys: []string{"k"}, ShardingKey: fmt.Sprint(i)})
		ids = append(ids, r[0].MessageID)
	}
	before, _ := e.TopicStats("t")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	_, err = e.Put(t.Context(), "t", []core.PutMessage{text("late")})
	wantCode(t, err, core.EUnavailable)

	e = openTest(t, Options{Dir: dir})
	after, err := e.TopicStats("t")
	if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("stats after reopen %+v, before %+v (%v)", after, before, err)
	}
	for i, id := range ids {
		m, err := e.Message("t", id)
		if err != nil || string(m.Body) != fmt.Sprint("m", i) {
			t.Fatalf("message %d after reopen: %v", i, err)
		}
	}
	if byKey, _ := e.MessagesByKey("t", "k", 100); len(byKey) != 30 {
		t.Fatalf("key index after reopen: %d", len(byKey))
	}
	// Offsets continue, never reused.
	r := mustPut(t, e, "t", core.PutMessage{Body: []byte("new"), ShardingKey: "0"})[0]
	if r.QueueOffset != after.Queues[r.QueueID].MaxOffset {
		t.Fatalf("offset after reopen %d, want %d", r.QueueOffset, after.Queues[r.QueueID].MaxOffset)
	}
}

func TestSecondOpenFailsFast(t *testing.T) {
	e := openTest(t, Options{})
	start := time.Now()
	_, err := Open(Options{Dir: e.opts.Dir})
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "data dir in use by another process") {
		t.Fatalf("second open: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("second open took %v", d)
	}
}

func TestCorruptFileRefused(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	marker := []byte("UNIQUE-MARKER-0123456789")
	mustPut(t, e, "t", text("first"), core.PutMessage{Body: marker})
	e.Close()
	orig, err := os.ReadFile(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(name string, mutate func([]byte)) {
		t.Run(name, func(t *testing.T) {
			cdir := t.TempDir()
			b := bytes.Clone(orig)
			mutate(b)
			if err := os.WriteFile(filepath.Join(cdir, store.FileName), b, 0o600); err != nil {
				t.Fatal(err)
			}
			e, err := Open(Options{Dir: cdir})
			if err == nil {
				e.Close()
				t.Fatal("corrupt file opened")
			}
			if !strings.Contains(err.Error(), filepath.Join(cdir, store.FileName)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			t.Log(err)
		})
	}
	// A flipped byte in a message body is not a reason to refuse the file:
	// the record is set aside and reported (TestCorruptRecordSetAside).
	corrupt("meta pages", func(b []byte) {
		for _, off := range []int{0, os.Getpagesize()} {
			for j := 16; j < 64; j++ {
				b[off+j] ^= 0x5a
			}
		}
	})
	corrupt("zeroed page", func(b []byte) {
		i := bytes.Index(b, marker)
		ps := os.Getpagesize()
		clear(b[i/ps*ps : i/ps*ps+ps])
	})
}

func TestRetentionRemovesExpiredMessages(t *testing.T) {
	e := openTest(t, Options{RetentionCheckInterval: 10 * time.Millisecond, RetentionUnit: 200 * time.Millisecond})
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "short", Queues: 1, RetentionHours: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "long", Queues: 1, RetentionHours: 1000}); err != nil {
		t.Fatal(err)
	}
	old := mustPut(t, e, "short", core.PutMessage{Body: []byte("old"), Keys: []string{"k"}})[0]
	mustPut(t, e, "long", text("kept"))
	mq := core.MessageQueue{Topic: "short"}
	checkFor(t, 5*time.Second, func() error {
		if min, _, _ := e.QueueOffsets(mq); min != 1 {
			return fmt.Errorf("min offset %d", min)
		}
		return nil
	})
	mustPut(t, e, "short", text("new"))
	r, _ := e.GetMessages(mq, 0, 10, core.MatchAll)
	if r.Status != core.OffsetIllegal || r.NextOffset != 1 {
		t.Fatalf("read below min: %+v", r)
	}
	_, err := e.Message("short", old.MessageID)
	wantCode(t, err, core.ENotFound)
	if ms, _ := e.MessagesByKey("short", "k", 10); len(ms) != 0 {
		t.Fatal("key index entry survived retention")
	}
	if st, _ := e.TopicStats("long"); st.Messages != 1 {
		t.Fatal("retention removed a message of a topic with long retention")
	}
}

func TestDeleteTopicRemovesMessages(t *testing.T) {
	e := openTest(t, Options{SegmentBytes: 1}) // a segment per group commit
	mustTopic(t, e, "t", 2)
	for range 3 {
		batch := make([]core.PutMessage, 300)
		for i := range batch {
			batch[i] = core.PutMessage{Body: []byte("x"), Keys: []string{"k"}}
		}
		mustPut(t, e, "t", batch...)
	}
	mustTopic(t, e, "keep", 1)
	kept := mustPut(t, e, "keep", text("stay"))[0]
	id := mustPut(t, e, "t", text("last"))[0].MessageID
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.DeleteTopic("t"), core.ENotFound)
	_, err := e.Message("t", id)
	wantCode(t, err, core.ENotFound)
	_, err = e.GetMessages(core.MessageQueue{Topic: "t"}, 0, 1, core.MatchAll)
	wantCode(t, err, core.ENotFound)
	_, err = e.Put(t.Context(), "t", []core.PutMessage{text("x")})
	wantCode(t, err, core.ENotFound)
	waitTrashEmpty(t, e, 1)
	if ms, err := e.MessagesByKey("keep", "k", 10); err != nil || len(ms) != 0 {
		t.Fatalf("key look-up after delete: %v %v", ms, err)
	}
	if _, err := e.Message("keep", kept.MessageID); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	if st, _ := e.TopicStats("t"); st.Messages != 0 || st.Queues[0].MaxOffset != 0 {
		t.Fatalf("recreated topic is not empty: %+v", st)
	}
}

func bucketLen(t testing.TB, e *Engine, name store.BucketName) int {
	n := 0
	if err := e.st.View(func(tx store.ReadTx) error {
		n = tx.Bucket(name).KeyN()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSearchOffset(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	mq := core.MessageQueue{Topic: "t"}
	var stamps []time.Time
	for i := range 20 {
		stamps = append(stamps, mustPut(t, e, "t", text(fmt.Sprint(i)))[0].StoredAt)
		if i%5 == 4 {
			// Let the store clock move on so stamps differ.
			time.Sleep(3 * time.Millisecond)
		}
	}
	for i, ts := range stamps {
		off, err := e.SearchOffset(mq, ts)
		if err != nil {
			t.Fatal(err)
		}
		// The first message stored at ts or later.
		want := int64(i)
		for want > 0 && !stamps[want-1].Before(ts) {
			want--
		}
		if off != want {
			t.Fatalf("SearchOffset(%v) = %d, want %d", ts, off, want)
		}
	}
	if off, _ := e.SearchOffset(mq, stamps[19].Add(time.Second)); off != 20 {
		t.Fatalf("after everything: %d", off)
	}
	if off, _ := e.SearchOffset(mq, time.Time{}); off != 0 {
		t.Fatalf("before everything: %d", off)
	}
}

// TestCloseAnswersEveryPublisher closes the engine under load: every Put
// either succeeds (and is readable after reopen) or fails with ErrClosed;
// none hangs, and no goroutine is left behind (goleak in TestMain).
func TestCloseAnswersEveryPublisher(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 4)
	var mu sync.Mutex
	var ok []string
	var wg sync.WaitGroup
	started := make(chan struct{}, 16)
	for p := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				res, err := e.Put(context.Background(), "t", []core.PutMessage{text(fmt.Sprint(p, "-", i))})
				if err != nil {
					if core.ErrorCode(err) != core.EUnavailable {
						t.Errorf("Put during close: %v", err)
					}
					return
				}
				mu.Lock()
				ok = append(ok, res[0].MessageID)
				mu.Unlock()
				if i == 2 {
					started <- struct{}{}
				}
			}
		})
	}
	for range 16 {
		<-started
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	e = openTest(t, Options{Dir: dir})
	for _, id := range ok {
		if _, err := e.Message("t", id); err != nil {
			t.Fatalf("acknowledged message %s lost: %v", id, err)
		}
	}
	t.Logf("%d publishes acknowledged before close", len(ok))
}

// TestRetentionPassWritesOnlyWhenExpired: with 2,000 queues holding
// messages none of which expired, a retention pass runs no write
// transaction (it decides in a read transaction); when the heads of a few
// queues expire, one write transaction removes them all.
func TestRetentionPassWritesOnlyWhenExpired(t *testing.T) {
	e := openTest(t, Options{RetentionCheckInterval: time.Hour, RetentionUnit: time.Minute})
	const topics, queues = 8, 250 // 2,000 queues
	for i := range topics {
		name := fmt.Sprintf("t%d", i)
		retention := 1000 // minutes, here
		if i == 0 {
			retention = 1
		}
		if _, _, err := e.PutTopic(core.TopicConfig{Name: name, Queues: queues, RetentionHours: retention}); err != nil {
			t.Fatal(err)
		}
		ops := make([]putOp, queues)
		for q := range ops {
			ops[q] = putOp{topic: name, queueID: q, msg: &core.Message{ID: fmt.Sprintf("%s-%d", name, q), Body: []byte("x"), Keys: []string{"k"}}}
		}
		if i == 0 {
			ops = ops[:3] // three queues of t0 hold a message, the rest are empty
		}
		if err := e.commit(t.Context(), ops, nil); err != nil {
			t.Fatal(err)
		}
	}
	writes := func(now time.Time) uint64 {
		t.Helper()
		before := e.WriterStats().Updates
		if err := e.clean(now); err != nil {
			t.Fatal(err)
		}
		return e.WriterStats().Updates - before
	}
	if n := writes(time.Now()); n != 0 {
		t.Fatalf("a pass with nothing expired ran %d write transactions", n)
	}
	// Two minutes on, t0's retention (one minute) has passed: its three
	// messages go, in one transaction; nothing else does.
	if n := writes(time.Now().Add(2 * time.Minute)); n != 1 {
		t.Fatalf("a pass removing three expired heads ran %d write transactions, want 1", n)
	}
	for q := range 3 {
		if min, max, _ := e.QueueOffsets(core.MessageQueue{Topic: "t0", QueueID: q}); min != 1 || max != 1 {
			t.Fatalf("t0 queue %d [%d, %d) after retention", q, min, max)
		}
	}
	if n := writes(time.Now().Add(2 * time.Minute)); n != 0 {
		t.Fatalf("the next pass ran %d write transactions", n)
	}
	if st, _ := e.TopicStats("t1"); st.Messages != queues {
		t.Fatalf("t1 holds %d messages, want %d", st.Messages, queues)
	}
	if ms, _ := e.MessagesByKey("t0", "k", 10); len(ms) != 0 {
		t.Fatal("key index entries survived retention")
	}
}

// BenchmarkRetentionPassNothingExpired: one pass over 2,000 queues with
// nothing to remove (reads only).
func BenchmarkRetentionPassNothingExpired(b *testing.B) {
	e := openTest(b, Options{RetentionCheckInterval: time.Hour})
	for i := range 8 {
		name := fmt.Sprintf("t%d", i)
		mustTopic(b, e, name, 250)
		ops := make([]putOp, 250)
		for q := range ops {
			ops[q] = putOp{topic: name, queueID: q, msg: &core.Message{ID: fmt.Sprintf("%s-%d", name, q), Body: []byte("x")}}
		}
		if err := e.commit(b.Context(), ops, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := e.clean(time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPutLimitsAreCores: the engine refuses exactly what core's limits
// refuse, with core.ValidatePut's Error, and takes what is at each limit.
func TestPutLimitsAreCores(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "lim", 2)
	limitstest.CheckPuts(t, 0, func(msgs []core.PutMessage) error {
		_, err := e.Put(t.Context(), "lim", msgs)
		return err
	})
}

// recordCount counts the commit log records left in the store.
func recordCount(t testing.TB, e *Engine) int {
	n := 0
	if err := e.st.View(func(tx store.ReadTx) error {
		n = tx.CountRecords()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetentionDropsSegments: once retention moved every queue past a
// segment's messages, the cleaner drops the segment whole (its records,
// units and index entries go), keeping those with a visible message.
func TestRetentionDropsSegments(t *testing.T) {
	e := openTest(t, Options{RetentionCheckInterval: 10 * time.Millisecond, RetentionUnit: 200 * time.Millisecond,
		SegmentBytes: 1}) // a segment per group commit
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "short", Queues: 2, RetentionHours: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "long", Queues: 1, RetentionHours: 1000}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustPut(t, e, "short", core.PutMessage{Body: []byte(fmt.Sprint("old", i)), Keys: []string{"k"}})
	}
	mustPut(t, e, "long", text("kept"))
	checkFor(t, 5*time.Second, func() error {
		if n := recordCount(t, e); n != 1 {
			return fmt.Errorf("%d records left", n)
		}
		return nil
	})
	if st, _ := e.TopicStats("long"); st.Messages != 1 {
		t.Fatal("retention removed a message of a topic with long retention")
	}
	if ms, _ := e.MessagesByKey("short", "k", 10); len(ms) != 0 {
		t.Fatal("key index entry survived retention")
	}
	mustPut(t, e, "short", text("new"))
	if st, _ := e.TopicStats("short"); st.Messages != 1 {
		t.Fatalf("after the drop: %+v", st)
	}
}
