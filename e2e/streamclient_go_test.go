package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// The Go stream client (apiclient/stream) against the real binary:
// publish with confirms, a bad message's error frame, consume under a
// flow limit, ack, nack, extend, flow, a stream handle on REST, and keys.

func sptr[T any](v T) *T { return &v }

func TestStreamClientPublishConsume(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "sc", 2)
	want(t, s.do(t, "PUT", "/v1/groups/scg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "sc"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), 201)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := &stream.Client{BaseURL: s.base}

	pub, err := cl.PublishStream(ctx, "sc", stream.PublishOptions{MaxUnconfirmedMessages: 4})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := pub.Limits(); n != 4 {
		t.Fatalf("maxUnconfirmedMessages in force %d, want 4", n)
	}
	// 20 publishes in flight through a window of 4, confirms matched by id.
	const n = 20
	confirms := make([]*stream.Confirm, n)
	for i := range confirms {
		c, err := pub.Publish(ctx, apiclient.PublishRequest{Body: sptr(fmt.Sprint("m-", i)), DeduplicationId: sptr(fmt.Sprint("run1-", i))})
		if err != nil {
			t.Fatal(err)
		}
		confirms[i] = c
	}
	ids := map[string]int{}
	for i, c := range confirms {
		rs, err := c.Wait(ctx)
		if err != nil || len(rs) != 1 || rs[0].MessageId == "" || rs[0].Topic != "sc" {
			t.Fatalf("confirm %d: %+v %v", i, rs, err)
		}
		if j, dup := ids[rs[0].MessageId]; dup {
			t.Fatalf("publishes %d and %d confirmed as one message %s", j, i, rs[0].MessageId)
		}
		ids[rs[0].MessageId] = i
	}
	// The same deduplicationId again stores nothing and answers the original.
	again, err := pub.PublishWait(ctx, apiclient.PublishRequest{Body: sptr("m-3"), DeduplicationId: sptr("run1-3")})
	if err != nil || again.Replayed == nil || !*again.Replayed || ids[again.MessageId] != 3 {
		t.Fatalf("replay: %+v %v", again, err)
	}
	// A bad message gets an error frame; the stream goes on.
	_, err = pub.PublishWait(ctx, apiclient.PublishRequest{Body: sptr("")})
	var pe *stream.ProblemError
	if !errors.As(err, &pe) || pe.Problem.Status != 400 {
		t.Fatalf("bad message: %v", err)
	}
	batch, err := pub.PublishBatch(ctx, []apiclient.PublishRequest{{Body: sptr("b-1")}, {Body: sptr("b-2")}})
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := batch.Wait(ctx); err != nil || len(rs) != 2 {
		t.Fatalf("batch after an error frame: %+v %v", rs, err)
	}
	if err := pub.Close(); err != nil {
		t.Fatalf("publisher close: %v", err)
	}

	// Consume under maxOutstandingMessages 5: five come, no sixth until one
	// is settled.
	c, err := cl.Consume(ctx, "scg", stream.ConsumeOptions{MaxOutstandingMessages: 5, InvisibleSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if l := c.Limits(); l.MaxOutstandingMessages != 5 || c.InvisibleSeconds() != 30 {
		t.Fatalf("open: %+v lease %d", l, c.InvisibleSeconds())
	}
	var got []apiclient.ReceivedMessage
	for range 5 {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if m, err := c.Receive(wctx); err == nil {
		t.Fatalf("a sixth delivery %s past maxOutstandingMessages 5", m.MessageId)
	}
	wcancel()
	rs, err := c.Ack(ctx, got[0].ReceiptHandle, got[1].ReceiptHandle)
	if err != nil || len(rs) != 2 || rs[0].Status != "ok" || rs[1].Status != "ok" {
		t.Fatalf("ack: %+v %v", rs, err)
	}
	rs, err = c.Nack(ctx, stream.NackOptions{DelayLevel: 1, Reason: "e2e says later"}, got[2].ReceiptHandle)
	if err != nil || rs[0].Status != "ok" {
		t.Fatalf("nack: %+v %v", rs, err)
	}
	rs, err = c.Extend(ctx, 120, got[3].ReceiptHandle)
	if err != nil || rs[0].Status != "ok" || rs[0].InvisibleUntil == nil || time.Until(*rs[0].InvisibleUntil) < 100*time.Second {
		t.Fatalf("extend: %+v %v", rs, err)
	}
	rs, err = c.Ack(ctx, "forged-handle")
	if err != nil || rs[0].Status != "invalid" {
		t.Fatalf("forged handle: %+v %v", rs, err)
	}
	// A stream's handle is an ordinary receipt handle on REST.
	r := s.do(t, "POST", "/v1/groups/scg/ack", map[string]any{"receiptHandles": []string{got[4].ReceiptHandle}})
	want(t, r, 200)
	var hr apiclient.HandleResults
	r.JSON(t, &hr)
	if len(hr.Results) != 1 || hr.Results[0].Status != "ok" {
		t.Fatalf("REST ack of a stream handle: %s", r.Body)
	}
	l, err := c.Flow(ctx, stream.Limits{MaxOutstandingMessages: 50})
	if err != nil || l.MaxOutstandingMessages != 50 || l.MaxOutstandingBytes == 0 {
		t.Fatalf("flow: %+v %v", l, err)
	}
	// The rest arrive: 22 stored, 2 acked, 1 extended, 1 nacked (back
	// after its delay level 1 = 1 s), so 18 more in all.
	seen := map[string]bool{}
	for len(seen) < n+2-4 {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("after %d: %v", len(seen), err)
		}
		seen[m.MessageId] = true
		if _, err := c.Ack(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	if seen[got[3].MessageId] {
		t.Fatalf("the extended message %s came back during its lease", got[3].MessageId)
	}
	if !seen[got[2].MessageId] {
		t.Fatalf("the nacked message %s did not come back", got[2].MessageId)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("consumer close: %v", err)
	}
	if _, err := c.Receive(ctx); !errors.Is(err, stream.ErrClosed) {
		t.Fatalf("receive after close: %v", err)
	}
}

func TestStreamClientKeys(t *testing.T) {
	s, _ := startAuthServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic := s.do(t, "PUT", "/v1/topics/orders", map[string]int{"queues": 1}, bearer(e2eAdminKey)...)
	want(t, createTopic, 201)

	_, err := (&stream.Client{BaseURL: s.base}).PublishStream(ctx, "orders", stream.PublishOptions{})
	var he *stream.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.Problem == nil {
		t.Fatalf("no key: %v", err)
	}
	_, err = (&stream.Client{BaseURL: s.base, Key: e2eSubKey}).PublishStream(ctx, "orders", stream.PublishOptions{})
	if !errors.As(err, &he) || he.StatusCode != 403 {
		t.Fatalf("a sub key on a publish stream: %v", err)
	}
	p, err := (&stream.Client{BaseURL: s.base, Key: e2ePubKey}).PublishStream(ctx, "orders", stream.PublishOptions{})
	if err != nil {
		t.Fatalf("the pub key: %v", err)
	}
	if _, err := p.PublishWait(ctx, apiclient.PublishRequest{Body: sptr("with a key")}); err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestStreamClientReconnects: with Reconnect, a consume stream outlives a
// server restart: the client opens a new stream on the restarted server
// and goes on; the deliveries left unsettled across the restart run out
// as leases do and come again, and every message is acked once.
func TestStreamClientReconnects(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "rc", 2)
	want(t, s.do(t, "PUT", "/v1/groups/rcg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "rc"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), 201)
	const n = 20
	streamPublishN(t, s, "rc", n, func(i int) map[string]any { return map[string]any{"body": fmt.Sprint("r-", i)} })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := &stream.Client{BaseURL: s.base}
	reconnected := make(chan error, 4)
	c, err := cl.Consume(ctx, "rcg", stream.ConsumeOptions{MaxOutstandingMessages: 5, InvisibleSeconds: 2,
		Reconnect: &stream.Reconnect{MinDelay: 50 * time.Millisecond, MaxDelay: 500 * time.Millisecond,
			OnReconnect: func(last error) { reconnected <- last }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acked := map[string]bool{}
	seen := map[string]int{}
	ack := func(m apiclient.ReceivedMessage) {
		t.Helper()
		rs, err := c.Ack(ctx, m.ReceiptHandle)
		if err != nil {
			t.Fatalf("ack %s: %v", m.MessageId, err)
		}
		if rs[0].Status == "ok" {
			if acked[m.MessageId] {
				t.Fatalf("%s acked ok twice", m.MessageId)
			}
			acked[m.MessageId] = true
		}
	}
	// 5 out: 2 acked, 3 left unsettled across the restart.
	var unsettled []string
	for i := 0; i < 5; i++ {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[m.MessageId]++
		if i < 2 {
			ack(m)
		} else {
			unsettled = append(unsettled, m.MessageId)
		}
	}
	first := c.StreamID()
	s.stop(t) // SIGTERM: the stream closes 1001
	s2 := startServer(t, dir, "--addr", s.addr)
	select {
	case last := <-reconnected:
		var ce *stream.ClosedError
		if !errors.As(last, &ce) {
			t.Fatalf("reconnected after %v, want the stream's *ClosedError", last)
		}
	case <-ctx.Done():
		t.Fatalf("no reconnect to the restarted server\n%s", s2.Logs())
	}
	if c.Reconnects() < 1 || c.StreamID() == first {
		t.Fatalf("reconnects %d, stream %s (was %s)", c.Reconnects(), c.StreamID(), first)
	}
	for len(acked) < n {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("after the restart, %d of %d acked: %v", len(acked), n, err)
		}
		seen[m.MessageId]++
		ack(m)
	}
	for _, id := range unsettled {
		if seen[id] < 2 {
			t.Fatalf("%s, unsettled across the restart, was delivered %d times, want again after its lease", id, seen[id])
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !errors.Is(c.Err(), stream.ErrClosed) {
		t.Fatalf("Err after Close: %v", c.Err())
	}
}

// The callback forms (PublishAsync, AckFunc) against the real binary:
// 500 publishes in flight through a window of 50, each callback told its
// own message's id once, a bad message's problem through its callback,
// then every message consumed and acked through AckFunc with ok.
func TestStreamClientCallbacks(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "cb", 2)
	want(t, s.do(t, "PUT", "/v1/groups/cbg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "cb"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), 201)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := &stream.Client{BaseURL: s.base}
	pub, err := cl.PublishStream(ctx, "cb", stream.PublishOptions{MaxUnconfirmedMessages: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	const n = 500
	type answer struct {
		i   int
		r   apiclient.PublishResult
		err error
	}
	answers := make(chan answer, n+1)
	for i := range n {
		err := pub.PublishAsync(ctx, apiclient.PublishRequest{Body: sptr(fmt.Sprint("cb-", i))}, func(r apiclient.PublishResult, err error) {
			answers <- answer{i, r, err}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.PublishAsync(ctx, apiclient.PublishRequest{Body: sptr("late"), DelaySeconds: sptr(1 << 30)}, func(r apiclient.PublishResult, err error) {
		answers <- answer{-1, r, err}
	}); err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for range n + 1 {
		var a answer
		select {
		case a = <-answers:
		case <-ctx.Done():
			t.Fatalf("%d of %d callbacks called", len(byID), n+1)
		}
		if a.i < 0 {
			var pe *stream.ProblemError
			if !errors.As(a.err, &pe) || pe.Problem.Status != 400 {
				t.Fatalf("bad message's callback: %+v %v", a.r, a.err)
			}
			continue
		}
		if a.err != nil || a.r.MessageId == "" {
			t.Fatalf("publish %d: %+v %v", a.i, a.r, a.err)
		}
		if j, dup := byID[a.r.MessageId]; dup {
			t.Fatalf("publishes %d and %d confirmed as one message", j, a.i)
		}
		byID[a.r.MessageId] = a.i
	}
	if len(byID) != n {
		t.Fatalf("%d distinct confirms, want %d", len(byID), n)
	}

	c, err := cl.Consume(ctx, "cbg", stream.ConsumeOptions{MaxOutstandingMessages: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acked := make(chan error, n)
	for range n {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i, ok := byID[m.MessageId]
		if !ok || m.Body == nil || *m.Body != fmt.Sprint("cb-", i) {
			t.Fatalf("delivery %s (%v) is no confirmed publish's", m.MessageId, m.Body)
		}
		delete(byID, m.MessageId) // a second delivery of it fails above
		c.AckFunc(func(rs []apiclient.HandleResult, err error) {
			if err == nil && (len(rs) != 1 || rs[0].Status != "ok") {
				err = fmt.Errorf("ack of %s: %+v", m.MessageId, rs)
			}
			acked <- err
		}, m.ReceiptHandle)
	}
	for range n {
		if err := <-acked; err != nil {
			t.Fatal(err)
		}
	}
	// Every ack had its own answer; the acks given while the client's
	// writer was busy shared frames (apiclient/stream/ackgather.go), so
	// the server read at most one frame per ack.
	frames := scrape(t, s)[`mqgate_stream_frames_total{direction="in",kind="consume"}`]
	if frames < 1 || frames > n {
		t.Fatalf("the server read %v consume stream frames for %d acks", frames, n)
	}
	t.Logf("%d acks in %v frames", n, frames)
}
