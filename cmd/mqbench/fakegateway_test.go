package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	// dropEvery loses every n-th message (0: never).
	dropEvery int
	// delay holds each published message back this long before it can
	// be received.
	delay time.Duration

	mu      sync.Mutex
	pending sync.WaitGroup
	acked   map[string]int

	// The push group's webhook sender: one goroutine, stopped by
	// pushStop and waited for with pushDone.
	pushStop chan struct{}
	pushDone chan struct{}
	// forgeEvery signs every n-th webhook with a wrong key (0: never).
	forgeEvery int
}

// fakeOptions are the fake's injected behaviours, fixed before it starts.
type fakeOptions struct {
	dupEvery, dropEvery, forgeEvery int
	delay                           time.Duration
}

func startFakeGateway(t *testing.T, o fakeOptions) *fakeGateway {
	t.Helper()
	g := &fakeGateway{queue: make(chan receivedMessage, 1<<16), dupEvery: o.dupEvery, dropEvery: o.dropEvery,
		forgeEvery: o.forgeEvery, delay: o.delay, acked: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/topics/{topic}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("PUT /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		var spec groupSpec
		if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if spec.Push != nil {
			g.startPusher(*spec.Push)
		}
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("DELETE /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		g.stopPusher()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/topics/{topic}/messages", func(w http.ResponseWriter, r *http.Request) {
		var m wireMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		id := g.publish(r.PathValue("topic"), m)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"messageId":"` + id + `"}`))
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
		g.stopPusher()
		g.pending.Wait() // delayed publishes still in their timers
		g.srv.Close()
	})
	return g
}

// publish queues m and returns its message id.
func (g *fakeGateway) publish(topic string, m wireMessage) string {
	n := g.seq.Add(1)
	msg := receivedMessage{MessageID: "m" + strconv.FormatInt(n, 10), Topic: topic,
		QueueOffset: n, Properties: m.Properties, ReceiptHandle: "h" + strconv.FormatInt(n, 10)}
	if g.dropEvery > 0 && n%int64(g.dropEvery) == 0 {
		return msg.MessageID
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
		return msg.MessageID
	}
	g.pending.Add(1)
	time.AfterFunc(g.delay, func() { defer g.pending.Done(); enqueue() })
	return msg.MessageID
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

// startPusher delivers the queue to push.URL, one message per signed
// request, retrying a message until it is answered 2xx — what a push
// group's listener does.
func (g *fakeGateway) startPusher(push pushSpec) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pushStop != nil {
		return
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(push.Secret, "whsec_"))
	if err != nil {
		panic(err)
	}
	g.pushStop, g.pushDone = make(chan struct{}), make(chan struct{})
	stop, done := g.pushStop, g.pushDone
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 5 * time.Second}
		defer client.CloseIdleConnections()
		var n int
		for {
			var m receivedMessage
			select {
			case m = <-g.queue:
			case <-stop:
				return
			}
			m.ReceiptHandle = ""
			body, _ := json.Marshal(receiveAnswer{Messages: []receivedMessage{m}})
			for {
				n++
				signKey := key
				if g.forgeEvery > 0 && n%g.forgeEvery == 0 {
					signKey = []byte("not the key")
				}
				if g.postHook(client, push.URL, signKey, n, body) {
					break
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}
	}()
}

func (g *fakeGateway) postHook(c *http.Client, url string, key []byte, n int, body []byte) bool {
	id, ts := "msg_"+strconv.Itoa(n), strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

func (g *fakeGateway) stopPusher() {
	g.mu.Lock()
	stop, done := g.pushStop, g.pushDone
	g.pushStop, g.pushDone = nil, nil
	g.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
