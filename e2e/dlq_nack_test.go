package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// dlqPage is the answer of GET /v1/groups/{group}/dlq.
type dlqPage struct {
	Messages   []delivered `json:"messages"`
	NextCursor string      `json:"nextCursor"`
}

func listDLQ(t *testing.T, s *server, group, query string) dlqPage {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/dlq"+query, nil)
	want(t, r, http.StatusOK)
	var p dlqPage
	r.JSON(t, &p)
	return p
}

func redrive(t *testing.T, s *server, group string, body any) int {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/dlq/redrive", body)
	want(t, r, http.StatusOK)
	var out struct {
		Redriven *int `json:"redriven"`
	}
	r.JSON(t, &out)
	if out.Redriven == nil {
		t.Fatalf("redrive answer %s: no redriven count", r.Body)
	}
	return *out.Redriven
}

func groupDepths(t *testing.T, s *server, group string) (retry, dlq int64) {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group, nil)
	want(t, r, http.StatusOK)
	var g struct {
		Status *struct {
			RetryDepth *int64 `json:"retryDepth"`
			DLQDepth   *int64 `json:"dlqDepth"`
		} `json:"status"`
	}
	r.JSON(t, &g)
	if g.Status == nil || g.Status.RetryDepth == nil || g.Status.DLQDepth == nil {
		t.Fatalf("group %s: %s: want status.retryDepth and status.dlqDepth", group, r.Body)
	}
	return *g.Status.RetryDepth, *g.Status.DLQDepth
}

// sameContent checks what a retry, dead letter or redrive must keep of
// the original.
func sameContent(t *testing.T, what string, got delivered, id, body string) {
	t.Helper()
	if got.MessageID != id || got.Topic != "orders" || got.Body == nil || *got.Body != body || got.Tags != "created" ||
		!reflect.DeepEqual(got.Keys, []string{"order-17", "customer-9"}) ||
		!reflect.DeepEqual(got.Properties, map[string]string{"region": "eu", "tier": "gold"}) {
		t.Fatalf("%s: %+v; want id %s, topic orders, body %q, tags, keys and properties of the original", what, got, id, body)
	}
}

// TestDLQNackLadderAndRedrive walks one message down the retry ladder
// (nack with delayLevel 0: the engine picks 3 + reconsumeTimes, here
// 300 ms, 400 ms, 500 ms) until maxReconsumeTimes = 3 is exhausted; it is
// then in the DLQ exactly once with its original id, topic, tags, keys,
// properties, body and reconsumeTimes 3. A second message nacked with
// delayLevel -1 is dead-lettered at once. Paging, errors, group status and
// metrics follow; redrive makes a dead letter consumable again by its
// group (reconsumeTimes 0) and by no other group.
func TestDLQNackLadderAndRedrive(t *testing.T) {
	s := startDelayServer(t, t.TempDir(), shortLevels)
	createTopic(t, s, "orders", 2)
	for _, g := range []string{"billing", "audit"} {
		want(t, s.do(t, "PUT", "/v1/groups/"+g, map[string]any{
			"subscriptions":     []map[string]any{{"topic": "orders"}},
			"consumeFrom":       map[string]any{"position": "FIRST_OFFSET"},
			"maxReconsumeTimes": 3,
		}), http.StatusCreated)
	}
	pub := func(body string) string {
		r := s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{
			"body": body, "tags": "created", "keys": []string{"order-17", "customer-9"},
			"properties": map[string]string{"region": "eu", "tier": "gold"},
		})
		want(t, r, http.StatusCreated)
		var pr publishResult
		r.JSON(t, &pr)
		return pr.MessageID
	}
	id1 := pub("first")

	// audit consumes it once and acks: redrives later are none of its business.
	got := receiveN(t, s, "audit", 1, 10*time.Second)
	sameContent(t, "audit", got[0], id1, "first")
	ack(t, s, "audit", got[0].ReceiptHandle)

	// billing fails it maxReconsumeTimes + 1 times.
	var lastNack time.Time
	for times := 0; times <= 3; times++ {
		got := receiveN(t, s, "billing", 1, 10*time.Second)
		sameContent(t, "billing delivery", got[0], id1, "first")
		if got[0].ReconsumeTimes != times {
			t.Fatalf("delivery %d has reconsumeTimes %d", times, got[0].ReconsumeTimes)
		}
		if times > 0 {
			// Level 3 + (times-1) of shortLevels: 300 ms, 400 ms, 500 ms.
			min := time.Duration(300+100*(times-1)) * time.Millisecond
			if gap := time.Since(lastNack); gap < min {
				t.Fatalf("retry %d came back %v after the nack, before its %v delay", times, gap, min)
			}
		}
		// The server starts the delay when it handles the nack, after
		// this moment: measured from here, the gap is never short.
		lastNack = time.Now()
		st, err := answer(s, "billing", "nack", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "delayLevel": 0})
		if err != nil || st[0] != "ok" {
			t.Fatalf("nack: %v %v", st, err)
		}
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if _, dlq := groupDepths(t, s, "billing"); dlq != 1 {
			return fmt.Errorf("dlqDepth %d, want 1", dlq)
		}
		return nil
	})
	wantNothing(t, s, "billing", 1)
	page := listDLQ(t, s, "billing", "")
	if len(page.Messages) != 1 || page.NextCursor != "" {
		t.Fatalf("DLQ %+v: want exactly one dead letter and no next page", page)
	}
	dl := page.Messages[0]
	sameContent(t, "dead letter", dl, id1, "first")
	if dl.ReconsumeTimes != 3 || dl.ReceiptHandle != "" || dl.QueueID != nil {
		t.Fatalf("dead letter %+v: want reconsumeTimes 3, no receipt handle, no queue position", dl)
	}

	// delayLevel -1: straight to the DLQ, with the failed delivery's count (0).
	id2 := pub("second")
	got = receiveN(t, s, "audit", 1, 10*time.Second)
	sameContent(t, "audit second", got[0], id2, "second")
	ack(t, s, "audit", got[0].ReceiptHandle)
	got = receiveN(t, s, "billing", 1, 10*time.Second)
	sameContent(t, "second", got[0], id2, "second")
	if st, err := answer(s, "billing", "nack", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "delayLevel": -1}); err != nil || st[0] != "ok" {
		t.Fatalf("nack -1: %v %v", st, err)
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if _, dlq := groupDepths(t, s, "billing"); dlq != 2 {
			return fmt.Errorf("dlqDepth %d, want 2", dlq)
		}
		return nil
	})
	// Paging: one per page, the cursor leads to the second, then the end.
	p1 := listDLQ(t, s, "billing", "?limit=1")
	if len(p1.Messages) != 1 || p1.Messages[0].MessageID != id1 || p1.NextCursor == "" {
		t.Fatalf("page 1: %+v", p1)
	}
	p2 := listDLQ(t, s, "billing", "?limit=1&cursor="+url.QueryEscape(p1.NextCursor))
	if len(p2.Messages) != 1 || p2.Messages[0].MessageID != id2 || p2.Messages[0].ReconsumeTimes != 0 {
		t.Fatalf("page 2: %+v", p2)
	}
	if p2.NextCursor != "" {
		if p3 := listDLQ(t, s, "billing", "?cursor="+url.QueryEscape(p2.NextCursor)); len(p3.Messages) != 0 || p3.NextCursor != "" {
			t.Fatalf("page 3: %+v", p3)
		}
	}
	if p := listDLQ(t, s, "audit", ""); len(p.Messages) != 0 {
		t.Fatalf("audit's DLQ: %+v", p)
	}
	// Errors: unknown group 404, bad cursor and limit 400, bad body 400.
	wantProblem(t, s.do(t, "GET", "/v1/groups/nope/dlq", nil), http.StatusNotFound)
	wantProblem(t, s.do(t, "POST", "/v1/groups/nope/dlq/redrive", map[string]any{}), http.StatusNotFound)
	wantProblem(t, s.do(t, "GET", "/v1/groups/billing/dlq?cursor=zz", nil), http.StatusBadRequest, "cursor")
	wantProblem(t, s.do(t, "GET", "/v1/groups/billing/dlq?limit=0", nil), http.StatusBadRequest, "limit")
	wantProblem(t, s.do(t, "POST", "/v1/groups/billing/dlq/redrive", map[string]any{"ids": []string{id1}}), http.StatusBadRequest)

	m := scrape(t, s)
	if v, ok := m[`mqgate_dlq_depth{group="billing"}`]; !ok || v != 2 {
		t.Fatalf("mqgate_dlq_depth{group=billing} = %v (exposed %v), want 2", v, ok)
	}
	if _, ok := m["mqgate_dead_lettered_messages_total"]; ok {
		if m["mqgate_dead_lettered_messages_total"] != 2 || m["mqgate_retried_messages_total"] != 3 {
			t.Fatalf("metrics: dead-lettered %v retried %v, want 2 and 3", m["mqgate_dead_lettered_messages_total"], m["mqgate_retried_messages_total"])
		}
	}

	// Redrive one by id: billing gets it again, reset; audit does not.
	if n := redrive(t, s, "billing", map[string]any{"messageIds": []string{id1}}); n != 1 {
		t.Fatalf("redriven %d, want 1", n)
	}
	got = receiveN(t, s, "billing", 1, 10*time.Second)
	sameContent(t, "redriven", got[0], id1, "first")
	if got[0].ReconsumeTimes != 0 {
		t.Fatalf("redriven message has reconsumeTimes %d, want 0", got[0].ReconsumeTimes)
	}
	ack(t, s, "billing", got[0].ReceiptHandle)
	wantNothing(t, s, "audit", 1)
	if p := listDLQ(t, s, "billing", ""); len(p.Messages) != 1 || p.Messages[0].MessageID != id2 {
		t.Fatalf("DLQ after redriving %s: %+v", id1, p)
	}
	// An unknown id redrives nothing; an empty body redrives the rest; a
	// second redrive finds nothing left.
	if n := redrive(t, s, "billing", map[string]any{"messageIds": []string{"no-such-id"}}); n != 0 {
		t.Fatalf("redrive of an unknown id: %d", n)
	}
	if n := redrive(t, s, "billing", nil); n != 1 {
		t.Fatalf("redrive all: %d, want 1", n)
	}
	got = receiveN(t, s, "billing", 1, 10*time.Second)
	sameContent(t, "redriven second", got[0], id2, "second")
	ack(t, s, "billing", got[0].ReceiptHandle)
	if n := redrive(t, s, "billing", map[string]any{"messageIds": []string{}}); n != 0 {
		t.Fatalf("second redrive all: %d, want 0", n)
	}
	wantNothing(t, s, "audit", 1)
	wantNothing(t, s, "billing", 1)
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		retry, dlq := groupDepths(t, s, "billing")
		if retry != 0 || dlq != 0 {
			return fmt.Errorf("retryDepth %d dlqDepth %d, want 0 and 0", retry, dlq)
		}
		return nil
	})
	if m := scrape(t, s); m[`mqgate_dlq_depth{group="billing"}`] != 0 {
		t.Fatalf("mqgate_dlq_depth{group=billing} = %v after redrive", m[`mqgate_dlq_depth{group="billing"}`])
	}
}
