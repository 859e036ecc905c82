package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// MinServerVersion is the oldest nats-server the backend accepts: message
// schedules (delay levels, deliverAt) and atomic batch publish came in 2.12.
const MinServerVersion = "2.12.0"

// Options configure a Backend.
type Options struct {
	// Conn is an established connection (tests); otherwise URL (and
	// Creds, a .creds file) are dialled.
	Conn  *nats.Conn
	URL   string
	Creds string
	// Key signs receipt handles; every instance in front of one cluster
	// must hold the same one (gateway.LoadKeyFile).
	Key []byte
	// PreviousKeys still verify handles signed before a key rotation;
	// they never sign one.
	PreviousKeys [][]byte
	// Replicas of every stream, consumer and bucket the backend creates
	// (default 3; 1 on a single server, with a loud warning).
	Replicas int
	// DelayLevels are the durations of delay levels 1..N (default
	// policy.DefaultDelayLevels, RocketMQ's, as on the embedded engine).
	DelayLevels []time.Duration
	// MaxDelay bounds delaySeconds / deliverAt (default 40 days).
	MaxDelay time.Duration
	// InstanceID names this gateway in group status (default random).
	InstanceID string
	Logger     zerolog.Logger
	// RequestTimeout bounds one JetStream API call (default 5 s).
	RequestTimeout time.Duration
	// MaxWaitingPerGroup and MaxWaiting bound the long-poll receives
	// parked on this instance, per group and in all (default 256 and
	// 4096, as embedded); more answer ETooMany (429).
	MaxWaitingPerGroup, MaxWaiting int
	// DedupWindow is how long an idempotency key is remembered per topic
	// (default 5 min, as embedded): the duplicate window of the topic
	// streams this backend creates or updates.
	DedupWindow time.Duration
	// Timeline records message timelines in the stream MQGATE_TIMELINE
	// (timeline.go), shared by every instance.
	Timeline bool
	// MaxAtomicBatch is the servers' atomic batch limit
	// (jetstream.limits.batch.max_msgs, default 1000). A publish is one
	// batch of its messages and their index entries (one per message
	// and per key).
	MaxAtomicBatch int
}

// Backend serves the HTTP API over a JetStream cluster: it implements
// core.Backend, the seam, in full. It keeps no state that another
// instance needs: everything shared lives in JetStream.
type Backend struct {
	opts   Options
	log    zerolog.Logger
	nc     *nats.Conn
	ownNC  bool
	js     jsapi.JetStream
	sealer *policy.Sealer // receipt handles (version byte sealedVersion)
	groups jsapi.KeyValue // group configs
	leases jsapi.KeyValue // lease overrides written by nack / extend
	claims jsapi.KeyValue // ORDERLY queue claims (orderclaim.go)
	// orderly holds ORDERLY groups' failing heads, parks and skips
	// (blocked.go).
	orderly jsapi.KeyValue
	jobs    jsapi.KeyValue // filter jobs (jobs.go)
	jobRun  jobRunner      // under mu

	topics  topicCache
	fences  fenceState // growth-fence checks passed for good (fence.go)
	gc      groupCache
	ensured sync.Map // stream/consumer → group UpdatedAt it was made for
	windows sync.Map // topic/uid → its stream's duplicate window (dedup.go)
	// indexReady: topic/uid whose stream holds indexSubjects (topics.go)
	indexReady sync.Map
	stash      map[string]*stash // by group / consumerId: messages pulled, not yet received
	// pushers are this instance's webhook pushers by group (push.go);
	// checkPushURL is the webhook guard's URL check (StartPush). Both
	// under mu.
	pushers      map[string]*webhook.Pusher
	checkPushURL func(ctx context.Context, url string) error
	pulls        map[string]bool     // consumers with a waiting pull from this instance (pullKey)
	noWaitPulls  map[string]bool     // ORDERLY queue consumers with a no_wait pull from this instance (pullNow)
	lanes        map[string]*pubLane // coalesced publishes by stream (coalesce.go), under mu
	laneCounters
	resumes                      resumeWatches // paused groups' watches, shared by their waiting receives (pause.go)
	view                         overrideView  // the leases bucket as this instance follows it (overrides.go)
	overrideReads, overrideSkips atomic.Uint64 // settles' override reads made and skipped
	stop                         chan struct{}
	wg                           sync.WaitGroup

	mu         sync.Mutex
	rr         map[string]uint32 // round-robin queue choice per topic
	draining   bool
	drain      chan struct{}
	waiting    map[string]int // long-poll receives per group (this instance)
	waitingAll int
	closed     bool
}

var _ core.Backend = (*Backend)(nil)

const (
	groupsBucket = "MQGATE_GROUPS"
	leasesBucket = "MQGATE_LEASES"
	// claimsBucket is file-stored; MQGATE_CLAIMS, its in-memory
	// predecessor, is left alone for gateways of older versions during
	// a rolling upgrade (docs/jetstream.md, "ORDERLY through a stale
	// leader").
	claimsBucket = "MQGATE_ORDER_CLAIMS"
)

// Open connects (unless Options.Conn is set), checks the server version,
// and creates the backend's buckets. It refuses a server older than
// MinServerVersion and warns when replicas are below 3.
func Open(ctx context.Context, opts Options) (*Backend, error) {
	if opts.Replicas == 0 {
		opts.Replicas = 3
	}
	if len(opts.DelayLevels) == 0 {
		opts.DelayLevels = policy.DefaultDelayLevels
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = core.MaxDelay
	}
	if opts.DedupWindow <= 0 {
		opts.DedupWindow = 5 * time.Minute
	}
	if opts.MaxAtomicBatch <= 0 {
		opts.MaxAtomicBatch = 1000
	}
	if opts.MaxWaitingPerGroup <= 0 {
		opts.MaxWaitingPerGroup = 256
	}
	if opts.MaxWaiting <= 0 {
		opts.MaxWaiting = 4096
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 5 * time.Second
	}
	if opts.InstanceID == "" {
		opts.InstanceID = "gw-" + nats.NewInbox()[len(nats.InboxPrefix):][:8]
	}
	sealer, err := policy.NewSealer(opts.Key, opts.PreviousKeys...)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	b := &Backend{opts: opts, log: opts.Logger, sealer: sealer, rr: map[string]uint32{},
		drain: make(chan struct{}), waiting: map[string]int{}, stash: map[string]*stash{},
		pulls: map[string]bool{}, noWaitPulls: map[string]bool{}, lanes: map[string]*pubLane{}, stop: make(chan struct{}), pushers: map[string]*webhook.Pusher{}}
	b.nc = opts.Conn
	if b.nc == nil {
		no := []nats.Option{nats.Name("mqgate " + opts.InstanceID), nats.MaxReconnects(-1)}
		if opts.Creds != "" {
			no = append(no, nats.UserCredentials(opts.Creds))
		}
		nc, err := nats.Connect(opts.URL, no...)
		if err != nil {
			return nil, fmt.Errorf("jetstream: connect %s: %w", opts.URL, err)
		}
		b.nc, b.ownNC = nc, true
	}
	if err := CheckServerVersion(b.nc.ConnectedServerVersion()); err != nil {
		b.closeConn()
		return nil, err
	}
	if b.js, err = jsapi.New(b.nc); err != nil {
		b.closeConn()
		return nil, err
	}
	if opts.Replicas < 3 {
		b.log.Warn().Int("replicas", opts.Replicas).
			Msg("JetStream streams are NOT replicated 3 ways: losing one server can lose acknowledged messages")
	}
	// A cluster that is still forming answers "no suitable peers": poll
	// until the buckets exist or ctx (default 30 s) ends.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err = b.createBuckets(cctx); err == nil {
			break
		}
		if e := notClustered(err, opts.Replicas); e != nil {
			b.closeConn()
			return nil, e
		}
		select {
		case <-cctx.Done():
			b.closeConn()
			return nil, err
		case <-tick.C:
		}
	}
	if err := b.startJobSupervisor(); err != nil {
		b.Close(ctx)
		return nil, err
	}
	return b, nil
}

// notClustered turns a single server's refusal of replicated streams
// (10074) into what to do about it; nil for any other error.
func notClustered(err error, replicas int) error {
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || ae.ErrorCode != errCodeReplicasNotClustered {
		return nil
	}
	return fmt.Errorf("jetstream: the NATS server is not clustered, so it cannot keep %d replicas of each stream "+
		"(%s): pass --nats-replicas 1 (MQGATE_NATS_REPLICAS=1) to run on this single server, "+
		"or point --nats-url at a cluster of 3 (docs/jetstream.md)", replicas, ae.Description)
}

func (b *Backend) createBuckets(ctx context.Context) error {
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	var err error
	if b.groups, err = b.js.CreateOrUpdateKeyValue(ctx, jsapi.KeyValueConfig{
		Bucket: groupsBucket, Replicas: b.opts.Replicas, History: 1, Storage: jsapi.FileStorage,
	}); err != nil {
		return fmt.Errorf("jetstream: groups bucket: %w", err)
	}
	if b.leases, err = b.js.CreateOrUpdateKeyValue(ctx, jsapi.KeyValueConfig{
		Bucket: leasesBucket, Replicas: b.opts.Replicas, History: 1, Storage: jsapi.FileStorage,
		// A lease override matters at most the longest lease after it
		// was written.
		TTL: 13 * time.Hour,
	}); err != nil {
		return fmt.Errorf("jetstream: leases bucket: %w", err)
	}
	// File storage, replicated: a claim must commit through a quorum,
	// and a node must not forget it. An in-memory bucket's replica comes
	// back from a kill -9 empty; if the leader goes down before it caught
	// up, it can be elected with claims missing, answer a stale claim and
	// let a stale delivery's compare-and-set through (a fault run saw an
	// ORDERLY key's message again after a later one that way: the
	// restarted node became the bucket's leader while the old one was
	// SIGSTOPped).
	if b.claims, err = b.js.CreateOrUpdateKeyValue(ctx, jsapi.KeyValueConfig{
		Bucket: claimsBucket, Replicas: b.opts.Replicas, History: 1, Storage: jsapi.FileStorage,
	}); err != nil {
		return fmt.Errorf("jetstream: claims bucket: %w", err)
	}
	if err := b.createOrderlyBucket(ctx); err != nil {
		return err
	}
	if err := b.createTimeline(ctx); err != nil {
		return err
	}
	if err := b.createJobsBucket(ctx); err != nil {
		return err
	}
	b.startOverrideView(ctx)
	return nil
}

// CheckServerVersion refuses a server older than MinServerVersion.
func CheckServerVersion(v string) error {
	if !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("jetstream: nats-server %q is too old: mqgate needs %s or newer (message schedules, atomic batches)", v, MinServerVersion)
	}
	return nil
}

func versionAtLeast(v, min string) bool {
	parse := func(s string) [3]int {
		s = strings.TrimPrefix(s, "v")
		if i := strings.IndexAny(s, "-+"); i >= 0 {
			s = s[:i]
		}
		var out [3]int
		for i, p := range strings.SplitN(s, ".", 3) {
			n, err := strconv.Atoi(p)
			if err != nil {
				return [3]int{-1}
			}
			out[i] = n
		}
		return out
	}
	a, m := parse(v), parse(min)
	if a[0] < 0 {
		return false
	}
	for i := range a {
		if a[i] != m[i] {
			return a[i] > m[i]
		}
	}
	return true
}

// Ready reports whether the backend can serve: connected to NATS and
// JetStream answering. /readyz calls it.
func (b *Backend) Ready(ctx context.Context) error {
	if !b.nc.IsConnected() {
		return errors.New("not connected to NATS")
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.RequestTimeout)
	defer cancel()
	if _, err := b.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	return nil
}

// Drain answers parked receives at once and refuses new ones.
func (b *Backend) Drain() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.draining {
		b.draining = true
		close(b.drain)
	}
}

// Close drains and closes the connection it opened. Leases held by
// callers of this instance are not lost: JetStream redelivers them after
// their ack wait.
func (b *Backend) Close(ctx context.Context) error {
	b.Drain()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.stop)
	b.mu.Unlock()
	b.view.close()
	b.wg.Wait()
	b.closeConn()
	return nil
}

func (b *Backend) closeConn() {
	if b.ownNC && b.nc != nil {
		b.nc.Close()
	}
}

// Conn is the backend's NATS connection.
func (b *Backend) Conn() *nats.Conn { return b.nc }

func (b *Backend) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, b.opts.RequestTimeout)
}
