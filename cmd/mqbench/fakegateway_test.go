package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeGateway is a tiny in-memory stand-in for the consumption half of
// API.md, so consume's and latency's accounting can be checked against
// known behaviour (injected duplicates, a known delivery delay) without
// the real engine. The e2e tests against the real binary are in
// gateway_e2e_test.go.
type fakeGateway struct {
	srv   *httptest.Server
	queue chan receivedMessage
	seq   atomic.Int64

	// dupEvery re-delivers every n-th message once more (0: never).
	dupEvery int
	// dropEvery loses every n-th message (0: never); set before use.
	dropEvery int
	// delay holds each published message back this long before it can
	// be received.
	delay time.Duration

	mu      sync.Mutex
	pending sync.WaitGroup
	acked   map[string]int
}

func startFakeGateway(t *testing.T, dupEvery int, delay time.Duration) *fakeGateway {
	t.Helper()
	g := &fakeGateway{queue: make(chan receivedMessage, 1<<16), dupEvery: dupEvery, delay: delay, acked: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/topics/{topic}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("PUT /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("DELETE /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/topics/{topic}/messages", func(w http.ResponseWriter, r *http.Request) {
		var m wireMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		g.publish(r.PathValue("topic"), m)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"messageId":"x"}`))
	})
	mux.HandleFunc("POST /v1/topics/{topic}/messages/batch", func(w http.ResponseWriter, r *http.Request) {
		var b wireBatch
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for _, m := range b.Messages {
			g.publish(r.PathValue("topic"), m)
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"results":[]}`))
	})
	mux.HandleFunc("POST /v1/groups/{group}/receive", g.receive)
	mux.HandleFunc("POST /v1/groups/{group}/ack", g.ack)
	g.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		g.pending.Wait() // delayed publishes still in their timers
		g.srv.Close()
	})
	return g
}

func (g *fakeGateway) publish(topic string, m wireMessage) {
	n := g.seq.Add(1)
	msg := receivedMessage{MessageID: "m" + strconv.FormatInt(n, 10), Topic: topic,
		QueueOffset: n, Properties: m.Properties, ReceiptHandle: "h" + strconv.FormatInt(n, 10)}
	if g.dropEvery > 0 && n%int64(g.dropEvery) == 0 {
		return
	}
	enqueue := func() {
		g.queue <- msg
		if g.dupEvery > 0 && n%int64(g.dupEvery) == 0 {
			msg.ReceiptHandle += "-again"
			g.queue <- msg
		}
	}
	if g.delay == 0 {
		enqueue()
		return
	}
	g.pending.Add(1)
	time.AfterFunc(g.delay, func() { defer g.pending.Done(); enqueue() })
}

func (g *fakeGateway) receive(w http.ResponseWriter, r *http.Request) {
	var in receiveRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.MaxMessages < 1 {
		http.Error(w, "bad receive", 400)
		return
	}
	var out receiveAnswer
	t := time.NewTimer(time.Duration(in.WaitSeconds) * time.Second)
	defer t.Stop()
	select { // long poll for the first message
	case m := <-g.queue:
		out.Messages = append(out.Messages, m)
	case <-t.C:
	case <-r.Context().Done():
		return
	}
more:
	for len(out.Messages) > 0 && len(out.Messages) < in.MaxMessages {
		select {
		case m := <-g.queue:
			out.Messages = append(out.Messages, m)
		default:
			break more
		}
	}
	if out.Messages == nil {
		out.Messages = []receivedMessage{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (g *fakeGateway) ack(w http.ResponseWriter, r *http.Request) {
	var in handlesRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	type result struct {
		ReceiptHandle string `json:"receiptHandle"`
		Status        string `json:"status"`
	}
	out := struct {
		Results []result `json:"results"`
	}{}
	g.mu.Lock()
	for _, h := range in.ReceiptHandles {
		g.acked[h]++
		out.Results = append(out.Results, result{h, "ok"})
	}
	g.mu.Unlock()
	_ = json.NewEncoder(w).Encode(out)
}
