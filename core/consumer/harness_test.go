package consumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// env is a real engine and group registry over one bbolt file in a temp
// dir, reopenable to test restarts.
type env struct {
	t       *testing.T
	dir     string
	eng     *engine.Engine
	reg     *groups.Registry
	back    *recordingSendBack
	regOpts groups.Options
	delays  []time.Duration // engine delay levels (default RocketMQ's)
	// heartbeats, when set, is every consumer's shared heartbeat sender.
	heartbeats *Heartbeats
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, dir: t.TempDir(), back: &recordingSendBack{}}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *env) open() {
	e.t.Helper()
	eng, err := engine.Open(engine.Options{Dir: e.dir, DelayLevels: e.delays})
	if err != nil {
		e.t.Fatal(err)
	}
	opts := e.regOpts
	// As cmd/mqgate wires it: starts decided at subscription, positions
	// through the group commit.
	opts.Offsets = eng
	opts.Commit = eng.CommitHook
	reg, err := groups.OpenWith(eng.Store(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.eng, e.reg = eng, reg
}

func (e *env) close() {
	if e.reg != nil {
		e.reg.Close()
		e.reg = nil
	}
	if e.eng != nil {
		e.eng.Close()
		e.eng = nil
	}
}

// restart closes and reopens the engine (consumers must be shut down).
func (e *env) restart() {
	e.close()
	e.open()
}

func (e *env) topic(name string, queues int) {
	e.t.Helper()
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: name, Queues: queues}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) group(cfg core.GroupConfig) core.GroupConfig {
	e.t.Helper()
	g, _, err := e.reg.Put(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return g.GroupConfig
}

// publish puts n messages in batches of batch, bodies "<prefix><i>".
func (e *env) publish(topic, prefix string, n, batch int, key func(i int) string) []core.PutResult {
	e.t.Helper()
	var out []core.PutResult
	for i := 0; i < n; i += batch {
		var msgs []core.PutMessage
		for j := i; j < min(i+batch, n); j++ {
			m := core.PutMessage{Body: []byte(fmt.Sprintf("%s%d", prefix, j)), BodyIsText: true}
			if key != nil {
				m.ShardingKey = key(j)
			}
			msgs = append(msgs, m)
		}
		res, err := e.eng.Put(context.Background(), topic, msgs)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, res...)
	}
	return out
}

func (e *env) consumer(cfg core.GroupConfig, clientID string, l Listener, mod func(*Options)) *PushConsumer {
	e.t.Helper()
	o := Options{Group: cfg, ClientID: clientID, Listener: l}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o, Deps{Reader: e.eng, SendBack: e.back, Coordinator: e.reg, Heartbeats: e.heartbeats})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func shutdown(t *testing.T, c *PushConsumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkFor polls fn until it returns nil or total passes (nats checkFor).
func checkFor(t *testing.T, total, sleep time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return
		}
		time.Sleep(sleep)
	}
	t.Fatalf("condition not met after %v: %v", total, err)
}

// engineSendBack is the engine's sendMessageBack with the registry's
// settle hook, as the gateway wires it (gateway.SettlingSendBack; the
// gateway imports this package, so the tests cannot).
type engineSendBack struct {
	eng *engine.Engine
	reg *groups.Registry
}

func (s engineSendBack) SendMessagesBack(ctx context.Context, group string, backs []SendBack) error {
	if len(backs) == 0 {
		return nil
	}
	out := make([]engine.SendBack, len(backs))
	for i, b := range backs {
		st := b.Settle
		out[i] = engine.SendBack{Msg: b.Msg, DelayLevel: b.DelayLevel, MaxReconsumeTimes: b.MaxReconsumeTimes,
			Settle: s.reg.SettleHook(group, st.Incarnation, st.ConsumerID, st.Queue, st.Offset, st.Epoch, st.TopicUID)}
	}
	return s.eng.SendMessagesBack(ctx, group, s.reg.GroupGuard(group, backs[0].Settle.Incarnation), out)
}

// recordingSendBack records send-backs; fail makes them fail.
type recordingSendBack struct {
	mu    sync.Mutex
	fail  bool
	calls []sendBackCall
}

type sendBackCall struct {
	msg        *core.Message
	delayLevel int
}

func (r *recordingSendBack) SendMessagesBack(_ context.Context, _ string, backs []SendBack) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return fmt.Errorf("send back refused (test)")
	}
	for _, b := range backs {
		cp := *b.Msg
		r.calls = append(r.calls, sendBackCall{&cp, b.DelayLevel})
	}
	return nil
}

func (r *recordingSendBack) setFail(v bool) {
	r.mu.Lock()
	r.fail = v
	r.mu.Unlock()
}

func (r *recordingSendBack) snapshot() []sendBackCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sendBackCall(nil), r.calls...)
}

// collector is a listener that acks everything at once and records who
// got what.
type collector struct {
	mu    sync.Mutex
	count map[string]int // body → deliveries
	total int
}

func newCollector() *collector { return &collector{count: map[string]int{}} }

func (c *collector) Consume(d *Delivery) {
	c.mu.Lock()
	for _, m := range d.Msgs {
		c.count[string(m.Body)]++
		c.total++
	}
	c.mu.Unlock()
	d.AckAll()
}

func (c *collector) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.count)
}

func (c *collector) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.count))
	for k, v := range c.count {
		out[k] = v
	}
	return out
}

func ownedOf(c *PushConsumer, topic string) []int {
	var out []int
	for _, s := range c.Status() {
		if s.Queue.Topic == topic {
			out = append(out, s.Queue.QueueID)
		}
	}
	return out
}
