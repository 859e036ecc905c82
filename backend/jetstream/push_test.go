package jetstream_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/gateway/webhook"
)

// A push group runs on both instances and delivers each message once.
func TestWebhookDeliveredOnce(t *testing.T) {
	e := newEnv(t)
	const secret = "push-secret-0123456789-abcdef" // at least 24 bytes (Standard Webhooks)
	var mu sync.Mutex
	seen := map[string]int{}
	bad := 0
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body); err != nil {
			mu.Lock()
			bad++
			mu.Unlock()
			w.WriteHeader(400)
			return
		}
		var p struct {
			Messages []struct {
				MessageID string `json:"messageId"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		for _, m := range p.Messages {
			seen[m.MessageID]++
		}
		mu.Unlock()
		w.WriteHeader(204)
	}))
	defer sink.Close()
	e.topic("push", 4)
	e.group("push-g", groupCfg("push", map[string]any{"push": map[string]any{"url": sink.URL, "secret": secret, "maxInFlight": 4}}))
	const n = 60
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		ids[e.publish(e.lb.URL, "push", map[string]any{"body": strconv.Itoa(i)})] = true
	}
	// Wait until every message was acknowledged (lag 0 on the group).
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var off struct {
			Offsets []struct {
				Lag int `json:"lag"`
			} `json:"offsets"`
		}
		mustDo(t, "GET", e.lb.URL+"/v1/groups/push-g/offsets", nil, &off, 200)
		lag := 0
		for _, o := range off.Offsets {
			lag += o.Lag
		}
		mu.Lock()
		got := len(seen)
		mu.Unlock()
		if lag == 0 && got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("push: %d of %d delivered, lag %d", got, n, lag)
		}
		<-tick.C
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range ids {
		if seen[id] != 1 {
			t.Fatalf("message %s delivered %d times", id, seen[id])
		}
	}
	if bad != 0 {
		t.Fatalf("%d requests with a bad signature", bad)
	}
	// The embedded gateway's pusher ran on both instances: its metrics and
	// the push state in group status count every message once overall.
	acked, delivered := 0.0, 0
	for _, g := range e.gws {
		mfs, err := g.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "mqgate_webhook_messages_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "result" && l.GetValue() == "acked" {
						acked += m.GetCounter().GetValue()
					}
				}
			}
		}
		var gr struct {
			Status struct {
				Push *struct {
					Delivered int `json:"delivered"`
				} `json:"push"`
			} `json:"status"`
		}
		mustDo(t, "GET", g.URL()+"/v1/groups/push-g", nil, &gr, 200)
		if gr.Status.Push == nil {
			t.Fatal("group status has no push state")
		}
		delivered += gr.Status.Push.Delivered
	}
	if acked != n || delivered != n {
		t.Fatalf("webhook metrics: %v acked, group status: %d delivered; want %d", acked, delivered, n)
	}
	// Receive on a push group is a conflict.
	if st := do(t, "POST", e.lb.URL+"/v1/groups/push-g/receive", map[string]any{"maxMessages": 1}, nil); st != 409 {
		t.Fatalf("receive on a push group = %d, want 409", st)
	}
}

// The webhook guard is the embedded gateway's: a push.url in a denied
// network (--webhook-deny-cidr) is refused when the group is written.
func TestWebhookGuardDeniedCIDR(t *testing.T) {
	e := newEnv(t)
	e.topic("push-deny", 1)
	cfg := groupCfg("push-deny", map[string]any{"push": map[string]any{
		"url": "http://192.0.2.7:8080/hook", "secret": "push-secret-0123456789-abcdef"}})
	if st := do(t, "PUT", e.lb.URL+"/v1/groups/push-deny-g", cfg, nil); st != 400 {
		t.Fatalf("PUT a push group into a denied network = %d, want 400", st)
	}
}
