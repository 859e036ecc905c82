// Package jstest starts an in-process NATS JetStream cluster on loopback
// (nats-server as a Go module): random ports, one temporary store
// directory per server, sync_interval always, max_payload 8 MiB. Tests
// and `mqbench jetstream` run the jetstream backend against it; nothing
// runs outside the calling process.
package jstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// MaxBatch is the servers' atomic batch limit (jetstream.limits.batch.max_msgs).
const MaxBatch = 50000

// Cluster is N JetStream servers routed to each other.
type Cluster struct {
	Name string
	dir  string

	mu      sync.Mutex
	servers []*server.Server
	opts    []*server.Options
}

// Start starts n servers (n ≥ 1) with stores under dir and waits until
// they route to each other and JetStream has a meta leader.
func Start(dir string, n int) (*Cluster, error) {
	c := &Cluster{Name: "mqgate-test", dir: dir}
	// JetStream clustering needs every server's routes configured up
	// front: reserve n loopback ports for the cluster listeners.
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	for i := 0; i < n; i++ {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			SyncAlways: true,
			MaxPayload: 8 << 20,
			NoSigs:     true,
			NoLog:      true,
		}
		// Batches carry index entries besides their messages (up to
		// 1000 messages with keys): the docs' server setting.
		o.JetStreamLimits.MaxBatchSize = MaxBatch
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: c.Name, Host: "127.0.0.1", Port: ports[i]}
			o.Routes = routes
		}
		if _, err := c.start(o); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	if err := c.WaitReady(60 * time.Second); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

// freePorts reserves n loopback ports (listen on :0, then release).
func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func (c *Cluster) start(o *server.Options) (*server.Server, error) {
	s, err := server.NewServer(o)
	if err != nil {
		return nil, err
	}
	go s.Start()
	if !s.ReadyForConnections(60 * time.Second) { // generous: CI machines can be loaded
		s.Shutdown()
		return nil, fmt.Errorf("jstest: server %s not ready", o.ServerName)
	}
	c.mu.Lock()
	c.servers = append(c.servers, s)
	c.opts = append(c.opts, o)
	c.mu.Unlock()
	return s, nil
}

// WaitReady polls until every running server sees a JetStream meta
// leader and all routes are up.
func (c *Cluster) WaitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		ok := true
		c.mu.Lock()
		live := 0
		for _, s := range c.servers {
			if s != nil && s.Running() {
				live++
			}
		}
		for _, s := range c.servers {
			if s == nil || !s.Running() {
				continue
			}
			if !s.JetStreamEnabled() || (live > 1 && (s.NumRoutes() < live-1 || s.JetStreamIsClustered() && !hasLeader(s))) {
				ok = false
			}
		}
		c.mu.Unlock()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("jstest: cluster not ready")
		}
		<-tick.C
	}
}

func hasLeader(s *server.Server) bool {
	raw, err := s.Jsz(&server.JSzOptions{})
	return err == nil && raw.Meta != nil && raw.Meta.Leader != ""
}

// URLs is the client URLs of the running servers, comma-separated.
func (c *Cluster) URLs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var u []string
	for _, s := range c.servers {
		if s != nil && s.Running() {
			u = append(u, s.ClientURL())
		}
	}
	return strings.Join(u, ",")
}

// Servers is the servers, by index (a stopped one stays, not running).
func (c *Cluster) Servers() []*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*server.Server(nil), c.servers...)
}

// StreamLeader is the index of the server leading stream (-1 if none).
func (c *Cluster) StreamLeader(stream string) int {
	for i, s := range c.Servers() {
		if s.Running() && s.JetStreamIsStreamLeader("$G", stream) {
			return i
		}
	}
	return -1
}

// Kill stops server i (its store stays on disk).
func (c *Cluster) Kill(i int) {
	s := c.Servers()[i]
	s.Shutdown()
	s.WaitForShutdown()
}

// Shutdown stops every server.
func (c *Cluster) Shutdown() {
	for _, s := range c.Servers() {
		if s != nil && s.Running() {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
}
