package stream

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/mqgate/mqgate/apiclient"
)

// busyWriter holds the client's writer, once it has taken a batch, until
// the test lets that batch go: the acks given meanwhile must gather.
type busyWriter struct {
	hold    atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func holdWriter(t *testing.T) *busyWriter {
	w := &busyWriter{entered: make(chan struct{}), gate: make(chan struct{})}
	testHookBatch = func() {
		if w.hold.Load() {
			w.entered <- struct{}{}
			<-w.gate
		}
	}
	t.Cleanup(func() { testHookBatch = nil })
	return w
}

// taken waits until the writer holds a batch.
func (w *busyWriter) taken(t *testing.T) {
	t.Helper()
	select {
	case <-w.entered:
	case <-ctx5(t).Done():
		t.Fatal("the writer took no batch")
	}
}

// answerAll answers a settlement frame per handle with status's answers.
func answerAll(t *testing.T, ws *websocket.Conn, f map[string]any, status func(h string) string) {
	t.Helper()
	var rs []map[string]any
	for _, h := range f["receiptHandles"].([]any) {
		rs = append(rs, map[string]any{"receiptHandle": h, "status": status(h.(string))})
	}
	writeFrame(t, ws, map[string]any{"type": "results", "id": f["id"], "results": rs})
}

func TestAcksGatherWhileTheWriterIsBusy(t *testing.T) {
	w := holdWriter(t)
	p := newPeer(t, map[string]any{"type": "open", "protocol": Protocol, "stream": "s-1", "group": "g",
		"maxOutstandingMessages": 64, "maxOutstandingBytes": 1 << 20, "invisibleSeconds": 30, "pingSeconds": 30})
	ctx := ctx5(t)
	c, err := (&Client{BaseURL: p.srv.URL}).Consume(ctx, "g", ConsumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-p.header
	ws := p.conn()
	status := func(h string) string { // each handle's own answer, so a mix-up shows
		if strings.HasSuffix(h, "x") {
			return "expired"
		}
		return "ok"
	}

	// An ack given while the writer is idle goes alone. While the writer
	// holds it, acks of 1 and 2 handles gather into one frame; the extend
	// after them closes that frame, so the ack after it goes behind it.
	w.hold.Store(true)
	a0 := c.AckAsync("h0")
	w.taken(t)
	a1 := c.AckAsync("h1")
	a2 := c.AckAsync("h2x", "h3")
	ext := c.ExtendAsync(60, "h4")
	a3 := c.AckAsync("h4")
	w.gate <- struct{}{}
	w.taken(t)
	w.hold.Store(false)
	w.gate <- struct{}{}
	want := []string{"ack [h0]", "ack [h1 h2x h3]", "extend [h4]", "ack [h4]"}
	var frames []map[string]any
	for i := range want {
		f := readFrame(t, ws)
		if got := fmt.Sprint(f["type"], " ", f["receiptHandles"]); got != want[i] {
			t.Fatalf("frame %d is %q, want %q", i, got, want[i])
		}
		frames = append(frames, f)
	}
	for _, i := range []int{3, 1, 2, 0} { // answered out of order: each waiter gets its own
		answerAll(t, ws, frames[i], status)
	}
	for _, c := range []struct {
		f    *Future[[]apiclient.HandleResult]
		want string
	}{{a0, "[{h0 ok}]"}, {a1, "[{h1 ok}]"}, {a2, "[{h2x expired} {h3 ok}]"}, {ext, "[{h4 ok}]"}, {a3, "[{h4 ok}]"}} {
		rs, err := c.f.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("{%s %s}", r.ReceiptHandle, r.Status))
		}
		if fmt.Sprint("[", strings.Join(got, " "), "]") != c.want {
			t.Fatalf("results %v, want %s", got, c.want)
		}
	}

	// An error frame for a gathered frame may be one waiter's fault: each
	// waiter's acks go again in a frame of their own.
	w.hold.Store(true)
	c.AckAsync("h5x")
	w.taken(t)
	b1, b2 := c.AckAsync("h5"), c.AckAsync("bad")
	w.gate <- struct{}{}
	w.taken(t)
	w.hold.Store(false)
	w.gate <- struct{}{}
	answerAll(t, ws, readFrame(t, ws), status)
	g := readFrame(t, ws)
	if fmt.Sprint(g["receiptHandles"]) != "[h5 bad]" {
		t.Fatalf("gathered %v", g)
	}
	problem := map[string]any{"type": "urn:mqgate:problem:invalid", "title": "Invalid request", "status": 400, "detail": "malformed handle"}
	writeFrame(t, ws, map[string]any{"type": "error", "id": g["id"], "problem": problem})
	for range 2 {
		f := readFrame(t, ws)
		switch hs := fmt.Sprint(f["receiptHandles"]); hs {
		case "[h5]":
			answerAll(t, ws, f, status)
		case "[bad]":
			writeFrame(t, ws, map[string]any{"type": "error", "id": f["id"], "problem": problem})
		default:
			t.Fatalf("resent %v, want [h5] and [bad] apart", hs)
		}
	}
	if r, err := b1.Wait(ctx); err != nil || len(r) != 1 || r[0].Status != "ok" {
		t.Fatalf("h5: %+v %v", r, err)
	}
	var pe *ProblemError
	if _, err := b2.Wait(ctx); !errors.As(err, &pe) || pe.Problem.Status != 400 {
		t.Fatalf("bad: %v, want its 400", err)
	}

	// Acks gathered behind a batch that is never written fail once the
	// stream ends, each exactly once (a second completion would panic).
	w.hold.Store(true)
	first := c.AckAsync("h6")
	w.taken(t)
	gathered := c.AckAsync("h7")
	ws.CloseNow()
	w.hold.Store(false)
	w.gate <- struct{}{}
	for _, f := range []*Future[[]apiclient.HandleResult]{first, gathered} {
		if _, err := f.Wait(ctx); err == nil {
			t.Fatal("an ack on an ended stream succeeded")
		}
	}
	if _, err := c.AckAsync("h8").Wait(ctx); err == nil {
		t.Fatal("an ack after the end succeeded")
	}
}
