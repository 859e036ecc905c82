package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memGroups is an in-memory GroupSource with a real watch channel.
type memGroups struct {
	mu       sync.Mutex
	groups   map[string]core.Group
	watchers []chan string
}

func newMemGroups(cfgs ...core.GroupConfig) *memGroups {
	g := &memGroups{groups: map[string]core.Group{}}
	for _, c := range cfgs {
		g.groups[c.Name] = core.Group{GroupConfig: c}
	}
	return g
}

func (g *memGroups) Get(name string) (core.Group, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.groups[name]
	if !ok {
		return core.Group{}, core.Errorf(core.ENotFound, "group %q not found", name)
	}
	return gr, nil
}

func (g *memGroups) List() ([]core.Group, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []core.Group
	for _, gr := range g.groups {
		out = append(out, gr)
	}
	return out, nil
}

func (g *memGroups) Watch() (<-chan string, func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := make(chan string, 64)
	g.watchers = append(g.watchers, ch)
	return ch, func() {}
}

func (g *memGroups) put(cfg core.GroupConfig) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups[cfg.Name] = core.Group{GroupConfig: cfg}
	for _, w := range g.watchers {
		w <- cfg.Name
	}
}

func (g *memGroups) del(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.groups, name)
	for _, w := range g.watchers {
		w <- name
	}
}

// answer is one recorded Delivery answer.
type answer struct {
	offset int64
	ok     bool
	level  int
}

// feeder stands in for the consume service of one client: tests hand the
// gateway deliveries through it and read the answers.
type feeder struct {
	opts consumer.Options

	mu         sync.Mutex
	answers    []answer
	started    bool
	shutdown   bool
	updates    []core.GroupConfig
	deliveries []*fakeDelivery
}

func (f *feeder) Start() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	return nil
}

func (f *feeder) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdown = true
	return nil
}

func (f *feeder) UpdateConfig(cfg core.GroupConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, cfg)
}

func (f *feeder) Status() []consumer.QueueStatus { return nil }
func (f *feeder) SetPrefetch(int)                {}

// deliver dispatches messages at offsets [from, from+n) of mq as one batch.
func (f *feeder) deliver(mq core.MessageQueue, orderly bool, from int64, n int) {
	msgs := make([]*core.Message, n)
	for i := range msgs {
		off := from + int64(i)
		msgs[i] = &core.Message{
			ID: fmt.Sprintf("%s-%d-%d", mq.Topic, mq.QueueID, off), Topic: mq.Topic,
			QueueID: mq.QueueID, QueueOffset: off, Body: []byte("x"), BodyIsText: true,
		}
	}
	d := &fakeDelivery{f: f, mq: mq, msgs: msgs}
	f.mu.Lock()
	f.deliveries = append(f.deliveries, d)
	f.mu.Unlock()
	f.opts.Listener.(*inbox).consume(d, mq, orderly, msgs)
}

// dropQueue marks every delivery of mq so far as of a dropped
// ProcessQueue, as the consumer's rebalance does; notify also tells the
// listener (QueueDropped), which the consumer does right after.
func (f *feeder) dropQueue(mq core.MessageQueue, notify bool) {
	f.mu.Lock()
	for _, d := range f.deliveries {
		if d.mq == mq {
			d.dropped.Store(true)
		}
	}
	f.mu.Unlock()
	if notify {
		f.opts.Listener.(consumer.DropListener).QueueDropped(mq)
	}
}

// fakeDelivery records answers as the consume service would receive them;
// a second answer for an index is ignored (consumer.Delivery contract).
type fakeDelivery struct {
	f        *feeder
	mq       core.MessageQueue
	msgs     []*core.Message
	answered map[int]bool
	dropped  atomic.Bool
}

func (d *fakeDelivery) Dropped() bool { return d.dropped.Load() }

func (d *fakeDelivery) Ack(i int)             { d.record(i, true, 0) }
func (d *fakeDelivery) Nack(i int, level int) { d.record(i, false, level) }

func (d *fakeDelivery) record(i int, ok bool, level int) {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	if d.answered == nil {
		d.answered = map[int]bool{}
	}
	if d.answered[i] {
		return
	}
	d.answered[i] = true
	d.f.answers = append(d.f.answers, answer{offset: d.msgs[i].QueueOffset, ok: ok, level: level})
}

func (f *feeder) got() []answer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]answer(nil), f.answers...)
}

func (f *feeder) isShutdown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shutdown
}

// rig is an Embedded over memGroups with feeders as clients.
type rig struct {
	t      testing.TB
	gw     *Embedded
	groups *memGroups

	mu      sync.Mutex
	clients map[string]*feeder // by group/clientID
}

func newRig(t testing.TB, opts Options, cfgs ...core.GroupConfig) *rig {
	t.Helper()
	r := &rig{t: t, groups: newMemGroups(cfgs...), clients: map[string]*feeder{}}
	opts.Groups = r.groups
	opts.InstanceID = "gw1"
	if opts.Key == nil {
		opts.Key = testKey
	}
	opts.NewClient = func(o consumer.Options) (PushClient, error) {
		f := &feeder{opts: o}
		r.mu.Lock()
		r.clients[o.Group.Name+"/"+o.ClientID] = f
		r.mu.Unlock()
		return f, nil
	}
	gw, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	r.gw = gw
	t.Cleanup(func() {
		if err := gw.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r
}

func (r *rig) client(group, clientID string) *feeder {
	r.t.Helper()
	var f *feeder
	checkFor(r.t, 2*time.Second, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		f = r.clients[group+"/"+clientID]
		if f == nil {
			return fmt.Errorf("no client %s/%s", group, clientID)
		}
		return nil
	})
	return f
}

func (r *rig) receive(group string, req core.ReceiveRequest) []core.Received {
	r.t.Helper()
	if req.MaxMessages == 0 {
		req.MaxMessages = 1
	}
	got, err := r.gw.Receive(context.Background(), group, req)
	if err != nil {
		r.t.Fatalf("receive: %v", err)
	}
	return got
}

// checkFor retries fn until it succeeds or total passes (nats-server's
// helper): the wait is on the condition, not on a guessed sleep.
func checkFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", total, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func clustering(name string) core.GroupConfig {
	return core.GroupConfig{
		Name: name, Subscriptions: []core.Subscription{{Topic: "t", Filter: "*"}},
		MessageModel: core.Clustering, ConsumeMode: core.Concurrently, InvisibleSeconds: 60,
	}
}

func orderly(name string) core.GroupConfig {
	c := clustering(name)
	c.ConsumeMode = core.Orderly
	return c
}

func q(id int) core.MessageQueue { return core.MessageQueue{Topic: "t", QueueID: id} }

func handles(rs []core.Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ReceiptHandle
	}
	return out
}

func offsets(rs []core.Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d:%d", r.Message.QueueID, r.Message.QueueOffset)
	}
	return out
}
