package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// nextName reads the next name from a topic watch, failing after a second
// (the watch's promise to consumers).
func nextName(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("watch closed")
		}
		return n
	case <-time.After(time.Second):
		t.Fatal("no topic change announced within 1s")
		return ""
	}
}

func TestWatchTopicsAnnouncesCreateGrowDelete(t *testing.T) {
	e := openTest(t, Options{})
	ch, cancel := e.WatchTopics()
	defer cancel()

	if _, _, err := e.PutTopic(core.TopicConfig{Name: "w", Queues: 2}); err != nil {
		t.Fatal(err)
	}
	if n := nextName(t, ch); n != "w" {
		t.Fatalf("create announced %q", n)
	}
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "w", Queues: 4}); err != nil {
		t.Fatal(err)
	}
	if n := nextName(t, ch); n != "w" {
		t.Fatalf("grow announced %q", n)
	}
	// A change a reader would see nothing of (same queues) is not announced;
	// the delete after it is the next name.
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "w", RetentionHours: 5}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteTopic("w"); err != nil {
		t.Fatal(err)
	}
	if n := nextName(t, ch); n != "w" {
		t.Fatalf("delete announced %q", n)
	}
	select {
	case n := <-ch:
		t.Fatalf("unexpected announcement %q", n)
	default:
	}
}

// A reader that does not read never blocks the engine, and later sees each
// changed name once, not one entry per change.
func TestWatchTopicsCoalescesForSlowReader(t *testing.T) {
	e := openTest(t, Options{})
	ch, cancel := e.WatchTopics()
	defer cancel()
	for i := range 20 {
		for _, name := range []string{"a", "b"} {
			if _, _, err := e.PutTopic(core.TopicConfig{Name: name, Queues: i + 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string]int{}
	for len(got) < 2 {
		got[nextName(t, ch)]++
	}
	// The first name may have been taken before the rest were added, so
	// each name shows up once or twice — never 20 times.
	for n, k := range got {
		if k > 2 {
			t.Fatalf("%q announced %d times", n, k)
		}
	}
}

func TestWatchTopicsClosedByCloseAndCancel(t *testing.T) {
	e := openTest(t, Options{})
	ch1, cancel1 := e.WatchTopics()
	cancel1()
	cancel1() // twice is fine
	if _, ok := <-ch1; ok {
		t.Fatal("cancelled watch still open")
	}
	ch2, cancel2 := e.WatchTopics()
	defer cancel2()
	e.Close()
	if _, ok := <-ch2; ok {
		t.Fatal("watch open after Close")
	}
	ch3, cancel3 := e.WatchTopics()
	defer cancel3()
	if _, ok := <-ch3; ok {
		t.Fatal("watch after Close is open")
	}
}

func TestGrowthRecordsLayouts(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, Options{Dir: dir})
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "g", Queues: 2}); err != nil {
		t.Fatal(err)
	}
	k0, k1 := keyForQueue(t, 2, 0), keyForQueue(t, 2, 1)
	put := func(key string, n int) {
		t.Helper()
		for range n {
			if _, err := e.Put(context.Background(), "g", []core.PutMessage{{Body: []byte("x"), ShardingKey: key}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(k0, 3)
	put(k1, 1)
	topic, _, err := e.PutTopic(core.TopicConfig{Name: "g", Queues: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []core.TopicLayout{{Queues: 2, Fence: []int64{3, 1}}}
	if !layoutsEqual(topic.Layouts, want) {
		t.Fatalf("layouts after growth %+v, want %+v", topic.Layouts, want)
	}
	put(k0, 2) // k0 may now land on queue 0 or 2
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "g", RetentionHours: 9}); err != nil {
		t.Fatal(err) // no growth, no new layout
	}
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "g", Queues: 8}); err != nil {
		t.Fatal(err)
	}
	st, err := e.TopicStats("g")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, core.TopicLayout{Queues: 4, Fence: []int64{
		st.Queues[0].MaxOffset, st.Queues[1].MaxOffset, st.Queues[2].MaxOffset, st.Queues[3].MaxOffset}})
	for _, reopen := range []bool{false, true} {
		if reopen {
			e.Close()
			e = openTest(t, Options{Dir: dir})
		}
		got, err := e.Topic("g")
		if err != nil {
			t.Fatal(err)
		}
		if !layoutsEqual(got.Layouts, want) {
			t.Fatalf("reopen=%v: layouts %+v, want %+v", reopen, got.Layouts, want)
		}
		res, err := e.GetMessages(core.MessageQueue{Topic: "g", QueueID: 0}, 0, 32, core.MatchAll)
		if err != nil {
			t.Fatal(err)
		}
		if res.TopicUID != got.UID || res.Layouts != 2 {
			t.Fatalf("GetResult uid %d layouts %d, want %d and 2", res.TopicUID, res.Layouts, got.UID)
		}
	}
	// A new incarnation starts without history.
	if err := e.DeleteTopic("g"); err != nil {
		t.Fatal(err)
	}
	fresh, _, err := e.PutTopic(core.TopicConfig{Name: "g", Queues: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.Layouts) != 0 {
		t.Fatalf("re-created topic has layouts %+v", fresh.Layouts)
	}
}

func layoutsEqual(a, b []core.TopicLayout) bool {
	return slices.EqualFunc(a, b, func(x, y core.TopicLayout) bool {
		return x.Queues == y.Queues && slices.Equal(x.Fence, y.Fence)
	})
}

// The fence is exact under concurrent publishing: every message's layout
// (core.LayoutOf) is the one its queue was chosen with — its sharding key
// modulo that layout's queue count. A publish that chose its queue before a
// growth and committed after it would sit above the fence in an old queue
// and break this.
func TestGrowthFenceExactUnderConcurrentPublishes(t *testing.T) {
	e := openTest(t, Options{})
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "c", Queues: 2}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			key := fmt.Sprint("key-", p)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.Put(context.Background(), "c", []core.PutMessage{{Body: []byte("x"), ShardingKey: key}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for _, n := range []int{3, 5, 8, 13, 32} {
		// Let some publishes land under each layout.
		checkFor(t, 10*time.Second, func() error {
			st, err := e.TopicStats("c")
			if err != nil {
				return err
			}
			if st.Messages < int64(40*n) {
				return fmt.Errorf("%d messages", st.Messages)
			}
			return nil
		})
		if _, _, err := e.PutTopic(core.TopicConfig{Name: "c", Queues: n}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()

	topic, err := e.Topic("c")
	if err != nil {
		t.Fatal(err)
	}
	queuesOf := func(layout int) int {
		if layout < len(topic.Layouts) {
			return topic.Layouts[layout].Queues
		}
		return topic.Queues
	}
	checked := 0
	for q := range topic.Queues {
		mq := core.MessageQueue{Topic: "c", QueueID: q}
		for off := int64(0); ; {
			res, err := e.GetMessages(mq, off, 256, core.MatchAll)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != core.Found {
				break
			}
			for _, m := range res.Messages {
				l := core.LayoutOf(topic.Layouts, q, m.QueueOffset)
				if want := int(fnv32a(m.ShardingKey) % uint32(queuesOf(l))); want != q {
					t.Fatalf("%s at %d/%d is in layout %d (%d queues) but that layout puts its key on queue %d",
						m.ShardingKey, q, m.QueueOffset, l, queuesOf(l), want)
				}
				checked++
			}
			off = res.NextOffset
		}
	}
	if len(topic.Layouts) != 5 || checked == 0 {
		t.Fatalf("%d layouts, %d messages checked", len(topic.Layouts), checked)
	}
}
