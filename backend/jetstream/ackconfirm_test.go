package jetstream

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// An ack that JetStream confirms only after its lease ended may have
// been applied after the message went out again (the redelivery timer
// does not wait for the ack's replication): a fault run, with a node
// rejoining and acks slow, saw an ack answered ok and its message
// delivered again at its ack wait. Such an ack answers expired. The gateway's
// connection runs through a proxy that holds what the server sends, so
// the confirmation of an ack sent inside its lease arrives after it; an
// ack confirmed at once answers ok, and acking the late one again
// answers ok (the ack floor passed it).
func TestAckConfirmedAfterTheLeaseIsExpired(t *testing.T) {
	cl := oneServer(t)
	px := newHoldingProxy(t, strings.TrimPrefix(cl.URLs(), "nats://"))
	b, _ := openAt(t, "nats://"+px.ln.Addr().String()) // the hold (~1.2 s) is inside its 5 s request timeout
	ctx := context.Background()
	if _, _, err := b.PutTopic(core.TopicConfig{Name: "late", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutGroup(ctx, core.GroupConfig{Name: "late-g", Subscriptions: []core.Subscription{{Topic: "late", Filter: "*"}},
		MessageModel: core.Clustering, ConsumeMode: core.Concurrently, ConsumeFrom: core.ConsumeFromFirstOffset, InvisibleSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	receive := func(body string) core.Received {
		t.Helper()
		if _, err := b.Put(ctx, "late", []core.PutMessage{{Body: []byte(body), BodyIsText: true}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.Receive(ctx, "late-g", core.ReceiveRequest{MaxMessages: 1, Wait: 5 * time.Second, Invisible: core.MinInvisible})
		if err != nil || len(got) != 1 || string(got[0].Message.Body) != body {
			t.Fatalf("receive %s: %v, %v", body, got, err)
		}
		return got[0]
	}
	ack := func(h string) core.HandleStatus {
		t.Helper()
		res, err := b.Ack(ctx, "late-g", []string{h})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Status
	}

	if st := ack(receive("prompt").ReceiptHandle); st != core.HandleOK {
		t.Fatalf("an ack confirmed inside its lease: %s, want ok", st)
	}
	r := receive("late")
	px.hold()
	time.AfterFunc(time.Until(r.InvisibleUntil)+200*time.Millisecond, px.release)
	if st := ack(r.ReceiptHandle); st != core.HandleExpired {
		t.Fatalf("an ack sent inside its lease and confirmed after it: %s, want expired", st)
	}
	if st := ack(r.ReceiptHandle); st != core.HandleOK {
		t.Fatalf("the same ack again, its message acknowledged: %s, want ok", st)
	}
}

// holdingProxy forwards TCP connections to target; while held, what the
// target sends back waits in the proxy.
type holdingProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	held   bool
	wg     sync.WaitGroup
}

func newHoldingProxy(t *testing.T, target string) *holdingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdingProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	var conns []net.Conn
	var connsMu sync.Mutex
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			connsMu.Lock()
			conns = append(conns, c, s)
			connsMu.Unlock()
			p.wg.Go(func() { io.Copy(s, c); s.Close() })
			p.wg.Go(func() { p.copyBack(c, s); c.Close() })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.release()
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
		p.wg.Wait()
	})
	return p
}

// copyBack copies the target's bytes to the client, waiting while held.
func (p *holdingProxy) copyBack(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.held {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *holdingProxy) hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

func (p *holdingProxy) release() {
	p.mu.Lock()
	p.held = false
	p.cond.Broadcast()
	p.mu.Unlock()
}
