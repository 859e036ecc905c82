package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"
)

// A real nats-server cluster for fault tests: separate processes (so the
// nemesis can kill -9, SIGSTOP and SIGCONT them), built from the module
// version in go.mod, with every route connection passing through an
// in-test TCP proxy (so the nemesis can cut a node off its peers while
// clients still reach it).

var (
	natsBinOnce sync.Once
	natsBin     string
	natsBinErr  error
)

// natsServerBin builds nats-server (the go.mod version) into ../build once
// per test binary; go's build cache makes a repeat a link at most.
func natsServerBin(t testing.TB) string {
	t.Helper()
	natsBinOnce.Do(func() {
		dir, err := filepath.Abs(filepath.Join("..", "build"))
		if err != nil {
			natsBinErr = err
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			natsBinErr = err
			return
		}
		natsBin = filepath.Join(dir, "nats-server")
		out, err := exec.Command("go", "build", "-o", natsBin, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsBinErr = fmt.Errorf("building nats-server: %v\n%s", err, out)
		}
	})
	if natsBinErr != nil {
		t.Fatal(natsBinErr)
	}
	return natsBin
}

// routeProxy forwards the route connections node from opens to node to.
// Cut, it closes them and drops every new one at once: the pair cannot
// talk, in either direction, until it is healed.
type routeProxy struct {
	from, to int
	ln       net.Listener
	target   string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newRouteProxy(t testing.TB, from, to int, target string) *routeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &routeProxy{from: from, to: to, ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

func (p *routeProxy) addr() string { return p.ln.Addr().String() }

func (p *routeProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			in.Close()
			continue
		}
		out, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			in.Close()
			out.Close()
			continue
		}
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// pipe copies one direction; the first side to end closes both.
func (p *routeProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

func (p *routeProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

func (p *routeProxy) close() {
	p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}

// natsProc is one nats-server process.
type natsProc struct {
	t         testing.TB
	name      string
	conf      string
	logPath   string
	clientURL string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool // SIGSTOPped
}

// start runs the process and waits for its "Server is ready" line.
func (n *natsProc) start() {
	n.t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command(natsServerBin(n.t), "-c", n.conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	ready := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if !once && strings.Contains(line, "Server is ready") {
				once = true
				close(ready)
			}
		}
		_, _ = io.Copy(logf, stderr)
		_ = cmd.Wait()
		logf.Close()
	}()
	n.mu.Lock()
	n.cmd, n.exited, n.stopped = cmd, exited, false
	n.mu.Unlock()
	timer := time.NewTimer(60 * time.Second)
	defer timer.Stop()
	select {
	case <-ready:
	case <-exited:
		n.t.Fatalf("nats-server %s exited at start:\n%s", n.name, n.logTail(40))
	case <-timer.C:
		n.kill()
		n.t.Fatalf("nats-server %s not ready within 60s:\n%s", n.name, n.logTail(40))
	}
}

func (n *natsProc) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(sig)
		switch sig {
		case syscall.SIGSTOP:
			n.stopped = true
		case syscall.SIGCONT:
			n.stopped = false
		}
	}
}

// kill is kill -9, waiting for the process to be gone.
func (n *natsProc) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

func (n *natsProc) logTail(lines int) string {
	b, _ := os.ReadFile(n.logPath)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// natsProcCluster is 3 (or n) nats-server processes, R3-ready, routes
// through one proxy per ordered pair of nodes.
type natsProcCluster struct {
	nodes   []*natsProc
	proxies []*routeProxy
}

// startNATSProcs starts n nodes with sync_interval always and waits for
// a JetStream meta leader. Everything is stopped at cleanup.
func startNATSProcs(t *testing.T, n int) *natsProcCluster {
	t.Helper()
	natsServerBin(t) // build before reserving ports
	dir := t.TempDir()
	ports, err := freeLoopbackPorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	c := &natsProcCluster{}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.signal(syscall.SIGCONT)
			nd.kill()
		}
		for _, p := range c.proxies {
			p.close()
		}
	})
	routes := make([][]string, n)
	for from := range n {
		for to := range n {
			if from == to {
				continue
			}
			p := newRouteProxy(t, from, to, fmt.Sprintf("127.0.0.1:%d", ports[n+to]))
			c.proxies = append(c.proxies, p)
			routes[from] = append(routes[from], "nats://"+p.addr())
		}
	}
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		store := filepath.Join(dir, name)
		// advertise names a closed port: a node must never learn a peer's
		// real cluster address from gossip and route around the proxies.
		conf := fmt.Sprintf(`server_name: %s
listen: "127.0.0.1:%d"
max_payload: 8388608
jetstream {
  store_dir: %q
  sync_interval: always
  limits { batch { max_msgs: 50000 } }
}
cluster {
  name: mqgate-faults
  listen: "127.0.0.1:%d"
  advertise: "127.0.0.1:1"
  no_advertise: true
  routes: [%s]
}
`, name, ports[i], store, ports[n+i], strings.Join(routes[i], ", "))
		confPath := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, &natsProc{t: t, name: name, conf: confPath,
			logPath: filepath.Join(dir, name+".log"), clientURL: fmt.Sprintf("nats://127.0.0.1:%d", ports[i])})
	}
	for _, nd := range c.nodes {
		nd.start()
	}
	checkFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		for _, nd := range c.nodes {
			if _, err := c.accountInfo(nd); err != nil {
				return fmt.Errorf("%s: %v", nd.name, err)
			}
		}
		return nil
	})
	return c
}

func freeLoopbackPorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// URLs is the client URLs of every node, comma-separated (--nats-url).
func (c *natsProcCluster) URLs() string {
	var u []string
	for _, nd := range c.nodes {
		u = append(u, nd.clientURL)
	}
	return strings.Join(u, ",")
}

func (c *natsProcCluster) node(name string) *natsProc {
	for _, nd := range c.nodes {
		if nd.name == name {
			return nd
		}
	}
	return nil
}

// withJS connects to nd alone (so a stopped or cut node elsewhere does
// not matter) and runs fn with a 3 s budget.
func withJS[T any](nd *natsProc, fn func(ctx context.Context, js jsapi.JetStream) (T, error)) (T, error) {
	var zero T
	nc, err := nats.Connect(nd.clientURL, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return zero, err
	}
	defer nc.Close()
	js, err := jsapi.New(nc)
	if err != nil {
		return zero, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return fn(ctx, js)
}

func (c *natsProcCluster) accountInfo(nd *natsProc) (*jsapi.AccountInfo, error) {
	return withJS(nd, func(ctx context.Context, js jsapi.JetStream) (*jsapi.AccountInfo, error) {
		return js.AccountInfo(ctx)
	})
}

// streamLeader asks the nodes other than except (in order) for the
// stream's leader; "" when none answers with one.
func (c *natsProcCluster) streamLeader(stream string, except ...string) (string, error) {
	var errs []error
	for _, nd := range c.nodes {
		skip := false
		for _, e := range except {
			skip = skip || nd.name == e
		}
		if skip {
			continue
		}
		leader, err := withJS(nd, func(ctx context.Context, js jsapi.JetStream) (string, error) {
			s, err := js.Stream(ctx, stream)
			if err != nil {
				return "", err
			}
			info := s.CachedInfo()
			if info.Cluster == nil {
				return "", errors.New("no cluster info")
			}
			return info.Cluster.Leader, nil
		})
		if err == nil && leader != "" {
			return leader, nil
		}
		errs = append(errs, fmt.Errorf("%s: %v", nd.name, err))
	}
	return "", errors.Join(errs...)
}

// streamCurrent is nil when some node answers that the stream has a
// leader and every other replica is online and current.
func (c *natsProcCluster) streamCurrent(stream string) error {
	var errs []error
	for _, nd := range c.nodes {
		_, err := withJS(nd, func(ctx context.Context, js jsapi.JetStream) (bool, error) {
			s, err := js.Stream(ctx, stream)
			if err != nil {
				return false, err
			}
			cl := s.CachedInfo().Cluster
			if cl == nil || cl.Leader == "" {
				return false, errors.New("no leader")
			}
			if len(cl.Replicas) < len(c.nodes)-1 {
				return false, fmt.Errorf("%d replicas besides the leader", len(cl.Replicas))
			}
			for _, p := range cl.Replicas {
				if !p.Current || p.Offline {
					return false, fmt.Errorf("replica %s: current %v, offline %v, lag %d", p.Name, p.Current, p.Offline, p.Lag)
				}
			}
			return true, nil
		})
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %v", nd.name, err))
	}
	return errors.Join(errs...)
}

// partition cuts (or heals) every route of node idx, both ways.
func (c *natsProcCluster) partition(idx int, cut bool) {
	for _, p := range c.proxies {
		if p.from == idx || p.to == idx {
			p.setCut(cut)
		}
	}
}

func (c *natsProcCluster) index(name string) int {
	for i, nd := range c.nodes {
		if nd.name == name {
			return i
		}
	}
	return -1
}
