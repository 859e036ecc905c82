package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/backend/embedded"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/backend/jetstream/jstest"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/gateway"
)

// target is one running backend as the suite sees it: a URL for
// everything and two instance URLs (the same one on embedded) for the
// cross-instance rules.
type target struct {
	name string
	lb   string
	a, b string
}

// levels are short delay levels so retries run in milliseconds.
var levels = []time.Duration{
	200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond,
}

func startEmbedded(t *testing.T) target {
	dir := t.TempDir()
	// The same core.Backend seam as JetStream's, through its one
	// constructor.
	be, err := embedded.Open(embedded.Options{Engine: engine.Options{Dir: dir, DelayLevels: levels, MaxDelay: 24 * time.Hour},
		// A timeline as mqgate serve has by default: the blocked list's
		// lastReason of a nacked head comes from it.
		TimelineEvents: gateway.TimelineRingSize})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Options{Backend: be}))
	t.Cleanup(func() {
		srv.Close()
		be.Close(context.Background())
	})
	return target{name: "embedded", lb: srv.URL, a: srv.URL, b: srv.URL}
}

var key = bytes.Repeat([]byte{9}, 32)

func startJetStream(t *testing.T, c *jstest.Cluster) target {
	urls := strings.Split(c.URLs(), ",")
	var inst []string
	for i := 0; i < 2; i++ {
		nc, err := nats.Connect(strings.Join(append([]string{urls[i]}, urls...), ","), nats.DontRandomize(), nats.MaxReconnects(-1))
		if err != nil {
			t.Fatal(err)
		}
		b, err := jetstream.Open(context.Background(), jetstream.Options{Conn: nc, Key: key, Replicas: 3,
			DelayLevels: levels, InstanceID: fmt.Sprintf("gw%d", i), MaxAtomicBatch: jstest.MaxBatch})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(api.New(api.Options{Backend: b}))
		t.Cleanup(func() {
			srv.Close()
			b.Close(context.Background())
			nc.Close()
		})
		inst = append(inst, srv.URL)
	}
	var n atomic.Uint64
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		u, _ := url.Parse(inst[n.Add(1)%2])
		r.SetURL(u)
	}}
	lb := httptest.NewServer(proxy)
	t.Cleanup(lb.Close)
	return target{name: "jetstream", lb: lb.URL, a: inst[0], b: inst[1]}
}
