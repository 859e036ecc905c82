package jetstream

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// An instance that has not seen a growth yet (its topic cache is up to
// topicTTL old) publishes a moved key to its old queue, after the key's
// earlier message went to its new queue through the instance that grew
// the topic. Its own ORDERLY lease of that later message must not hand it
// out before the earlier one: the message is newer than its cached view,
// so the lease reads the topic again and finds the fence. Without that
// read the stale instance, which pulls only the old queue, handed the
// later message out first (TestOrderlyAcrossGrowth saw it in most runs
// without -race). The caches are kept fresh by hand: the window is a
// second in production, and a test cannot count on landing in it.
func TestGrowthFencedOnAStaleInstance(t *testing.T) {
	cl := oneServer(t)
	stale, _ := openOn(t, cl)
	grower, _ := openOn(t, cl)
	ctx := context.Background()
	if _, _, err := stale.PutTopic(core.TopicConfig{Name: "grow", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := stale.PutGroup(ctx, core.GroupConfig{Name: "grow-g", Subscriptions: []core.Subscription{{Topic: "grow", Filter: "*"}},
		MessageModel: core.Clustering, ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset, InvisibleSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := stale.cachedTopicInfo("grow"); err != nil { // the view before the growth
		t.Fatal(err)
	}
	if _, _, err := grower.PutTopic(core.TopicConfig{Name: "grow", Queues: 4}); err != nil {
		t.Fatal(err)
	}
	key := ""
	for i := 0; key == ""; i++ { // a key that moves from queue 0
		if k := "k" + strconv.Itoa(i); keyQueue(k, 4) != 0 {
			key = k
		}
	}
	keepFresh := func() { // still inside its topicTTL
		stale.topics.mu.Lock()
		c := stale.topics.m["grow"]
		c.at = time.Now()
		stale.topics.m["grow"] = c
		stale.topics.mu.Unlock()
	}
	put := func(b *Backend, body string) int {
		t.Helper()
		keepFresh()
		res, err := b.Put(ctx, "grow", []core.PutMessage{{Body: []byte(body), BodyIsText: true, ShardingKey: key}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].QueueID
	}
	if q := put(grower, "first"); q != keyQueue(key, 4) {
		t.Fatalf("the grower stored the key in queue %d, want %d", q, keyQueue(key, 4))
	}
	if q := put(stale, "second"); q != 0 {
		t.Fatalf("the stale instance stored the key in queue %d, want its old queue 0", q)
	}
	keepFresh()
	got, err := stale.Receive(ctx, "grow-g", core.ReceiveRequest{MaxMessages: 16, Wait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, r := range got {
		bodies = append(bodies, string(r.Message.Body))
	}
	t.Logf("bodies %v", bodies)
	if len(bodies) > 0 && bodies[0] == "second" {
		t.Fatalf("the stale instance handed out %v: the key's later message before its earlier one", bodies)
	}
}
