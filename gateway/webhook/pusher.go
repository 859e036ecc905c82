package webhook

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// Pusher is the message listener of one push group: it POSTs the messages
// the consume services hand it to the group's webhook URL and answers each
// with Ack (2xx) or Nack (anything else), RocketMQ's CONSUME_SUCCESS and
// RECONSUME_LATER.
//
// Deliveries wait in one FIFO; a bounded set of workers (at most
// push.maxInFlight, started on demand, gone when the queue is empty) pulls
// from it, so a waiting message holds no goroutine and no more than
// maxInFlight requests are ever in flight.
type Pusher struct {
	group   string
	opts    Options
	guard   *guard
	metrics *groupMetrics
	log     zerolog.Logger

	// ctx is the parent of every request; cancelled when Close stops
	// waiting, which aborts requests still in flight.
	ctx    context.Context
	cancel context.CancelFunc

	wg sync.WaitGroup // workers

	mu   sync.Mutex // guards everything below; never held during I/O or answers
	cond sync.Cond  // on mu: a pause ended, the limit changed or the pusher closed
	cfg  config
	// client is the current client; transports holds every transport
	// created (the current one last) so Close can drop their idle
	// connections.
	client     *http.Client
	transports []*http.Transport
	queue      fifo
	queuedMsgs int
	workers    int // worker goroutines alive
	running    int // workers executing a job (not waiting for one)
	inFlight   int // requests sent, not yet answered
	inFlightN  int // messages in them
	// pausedUntil holds pushing after a Retry-After; pauseTimer is the one
	// timer, re-armed to the latest pause end, that wakes the workers.
	pausedUntil time.Time
	pauseTimer  *time.Timer
	closed      bool
	stats       stats
}

var _ consumer.Listener = (*Pusher)(nil)

// New returns the pusher of group with its push settings. It starts no
// goroutine until messages arrive.
func New(group string, pc core.PushConfig, opts Options) (*Pusher, error) {
	cfg, err := resolve(pc)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	p := &Pusher{
		group: group,
		opts:  opts,
		guard: g,
		cfg:   cfg,
		log:   opts.Logger.With().Str("group", group).Str("component", "webhook").Logger(),
	}
	if opts.Registerer != nil {
		m, err := newMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		p.metrics = &groupMetrics{m: m, group: group}
	}
	p.cond.L = &p.mu
	p.ctx, p.cancel = context.WithCancel(context.Background())
	client, tr := newClient(g, opts, cfg.maxInFlight)
	p.client, p.transports = client, []*http.Transport{tr}
	return p, nil
}

// Group is the group this pusher delivers for.
func (p *Pusher) Group() string { return p.group }

// Consume queues a delivery (consumer.Listener). It never blocks on the
// network. After Close every message is nacked at once, from the calling
// goroutine.
func (p *Pusher) Consume(d *consumer.Delivery) {
	n := len(d.Msgs)
	if n == 0 {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		job{d: d, lo: 0, hi: n}.nack(0)
		return
	}
	if d.Orderly {
		// One job: the same worker posts the chunks one after another, so a
		// queue never has two requests in flight (ConsumeMessageOrderlyService).
		p.queue.push(job{d: d, lo: 0, hi: n})
	} else {
		for lo := 0; lo < n; lo += p.cfg.batchSize {
			p.queue.push(job{d: d, lo: lo, hi: min(lo+p.cfg.batchSize, n)})
		}
	}
	p.queuedMsgs += n
	p.spawnLocked()
	p.mu.Unlock()
}

// spawnLocked starts workers while jobs wait that no free worker will take,
// up to maxInFlight.
func (p *Pusher) spawnLocked() {
	for p.workers < p.cfg.maxInFlight && p.workers-p.running < p.queue.len() {
		p.workers++
		p.wg.Add(1)
		go p.work()
	}
}

// Update applies changed push settings without dropping queued messages:
// the next request uses the new URL, secret and timeout; a new maxInFlight
// gets a new connection pool (requests in flight finish on the old one,
// then its connections close) and the worker set grows or shrinks to it.
func (p *Pusher) Update(pc core.PushConfig) error {
	cfg, err := resolve(pc)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return core.ErrClosed
	}
	old := p.cfg
	p.cfg = cfg
	if cfg.maxInFlight != old.maxInFlight {
		client, tr := newClient(p.guard, p.opts, cfg.maxInFlight)
		p.transports[len(p.transports)-1].CloseIdleConnections()
		p.client = client
		p.transports = append(p.transports, tr)
	}
	// Extra workers notice the lower limit after their current job;
	// paused ones are woken to notice it now.
	p.cond.Broadcast()
	p.spawnLocked()
	return nil
}

// Close stops the pusher: messages still queued are nacked at once (they
// come back through the retry topic), requests in flight are awaited and
// answered by their outcome. When ctx ends first, those requests are
// aborted and nacked, and Close returns ctx's error after the workers are
// gone. Consume after Close nacks.
func (p *Pusher) Close(ctx context.Context) error {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	jobs := p.queue.drain()
	p.queuedMsgs = 0
	if p.pauseTimer != nil {
		p.pauseTimer.Stop()
	}
	p.cond.Broadcast()
	p.mu.Unlock()

	n := 0
	for _, j := range jobs {
		n += j.len()
	}
	p.account(false, n)
	for _, j := range jobs {
		j.nack(0)
	}

	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		p.cancel()
		<-done
	}
	p.cancel()
	p.mu.Lock()
	trs := p.transports
	p.mu.Unlock()
	for _, tr := range trs {
		tr.CloseIdleConnections()
	}
	if !already {
		p.metrics.forget()
	}
	return err
}

// account adds messages answered without a request (given back unsent)
// to the counters; a request's messages are counted by finish.
func (p *Pusher) account(acked bool, n int) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.countLocked(acked, n)
	p.mu.Unlock()
	p.metrics.answered(acked, n)
}

// countLocked adds n answered messages to the status counters.
func (p *Pusher) countLocked(acked bool, n int) {
	if acked {
		p.stats.delivered += uint64(n)
	} else {
		p.stats.failed += uint64(n)
	}
}

// Status returns a snapshot of the group's delivery state.
func (p *Pusher) Status() core.PushStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := core.PushStatus{
		URL:                 p.cfg.url,
		InFlight:            p.inFlight,
		InFlightMessages:    p.inFlightN,
		Queued:              p.queuedMsgs,
		Delivered:           p.stats.delivered,
		Failed:              p.stats.failed,
		ConsecutiveFailures: p.stats.consecutiveFailures,
		LastSuccessAt:       p.stats.lastSuccessAt,
		LastErrorAt:         p.stats.lastErrorAt,
		LastError:           p.stats.lastError,
	}
	if time.Now().Before(p.pausedUntil) {
		s.PausedUntil = p.pausedUntil
	}
	return s
}
