package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// TestErrors walks API.md's error cases for topics and publishing: each
// answers problem+json with its status and, for 400s, the offending
// fields — and none of them changes anything.
func TestErrors(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 2)

	big := base64.StdEncoding.EncodeToString(make([]byte, core.MaxMessageSize+1))
	mib := base64.StdEncoding.EncodeToString(make([]byte, 1<<20))
	manyMsgs := make([]map[string]string, 1001)
	for i := range manyMsgs {
		manyMsgs[i] = map[string]string{"body": "x"}
	}
	fiveMiB := make([]map[string]string, 5)
	for i := range fiveMiB {
		fiveMiB[i] = map[string]string{"bodyBase64": mib}
	}

	cases := []struct {
		name   string
		method string
		path   string
		body   any
		hdr    []string
		status int
		fields []string
	}{
		// 400: malformed or invalid input.
		{"malformed JSON", "POST", "/v1/topics/orders/messages", `{"body": "x"`, nil, 400, nil},
		{"not an object", "POST", "/v1/topics/orders/messages", `["x"]`, nil, 400, nil},
		{"trailing data", "POST", "/v1/topics/orders/messages", `{"body":"x"} {"body":"y"}`, nil, 400, nil},
		{"empty body", "POST", "/v1/topics/orders/messages", ``, []string{"Content-Type", "application/json"}, 400, nil},
		{"unknown field", "POST", "/v1/topics/orders/messages", `{"body":"x","colour":"red"}`, nil, 400, []string{"colour"}},
		{"wrong type", "POST", "/v1/topics/orders/messages", `{"body":"x","delayLevel":"3"}`, nil, 400, []string{"delayLevel"}},
		{"both bodies", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "bodyBase64": "eA=="}, nil, 400, []string{"body"}},
		{"neither body", "POST", "/v1/topics/orders/messages", map[string]any{"tags": "t"}, nil, 400, []string{"body"}},
		{"empty text body", "POST", "/v1/topics/orders/messages", map[string]any{"body": ""}, nil, 400, []string{"body"}},
		{"bad base64", "POST", "/v1/topics/orders/messages", map[string]any{"bodyBase64": "not base64!"}, nil, 400, []string{"bodyBase64"}},
		{"two delays", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "delayLevel": 2, "delaySeconds": 5}, nil, 400, []string{"delayLevel"}},
		{"delay level 0", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "delayLevel": 0}, nil, 400, []string{"delayLevel"}},
		{"delay over 40 days", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "delaySeconds": 41 * 86400}, nil, 400, []string{"delaySeconds"}},
		{"bad deliverAt", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "deliverAt": "tomorrow"}, nil, 400, nil},
		{"tag with ||", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "tags": "a||b"}, nil, 400, []string{"tags"}},
		{"empty key", "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "keys": []string{""}}, nil, 400, []string{"keys[0]"}},
		{"bad topic name", "POST", "/v1/topics/bad.name/messages", map[string]any{"body": "x"}, nil, 400, []string{"topic"}},
		{"bad topic name put", "PUT", "/v1/topics/" + strings.Repeat("x", 128), nil, nil, 400, []string{"topic"}},
		{"zero queues", "PUT", "/v1/topics/t1", map[string]int{"queues": 0}, nil, 400, []string{"queues"}},
		{"too many queues", "PUT", "/v1/topics/t1", map[string]int{"queues": 257}, nil, 400, []string{"queues"}},
		{"unknown topic field", "PUT", "/v1/topics/t1", map[string]int{"partitions": 3}, nil, 400, []string{"partitions"}},
		{"empty batch", "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": []any{}}, nil, 400, []string{"messages"}},
		{"missing batch", "POST", "/v1/topics/orders/messages/batch", map[string]any{}, nil, 400, []string{"messages"}},
		{"batch of 1001", "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": manyMsgs}, nil, 400, []string{"messages"}},
		{"batch item invalid", "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": []any{
			map[string]any{"body": "ok"}, map[string]any{"body": "x", "bodyBase64": "eA=="}, map[string]any{"body": "x", "delayLevel": -1},
		}}, nil, 400, []string{"messages[1].body", "messages[2].delayLevel"}},
		{"browse and key", "GET", "/v1/topics/orders/messages?key=a&queueId=0", nil, nil, 400, []string{"key"}},
		{"query without key or queue", "GET", "/v1/topics/orders/messages", nil, nil, 400, []string{"key"}},
		{"browse bad queue", "GET", "/v1/topics/orders/messages?queueId=2", nil, nil, 400, []string{"queueId"}},
		{"browse bad offset", "GET", "/v1/topics/orders/messages?queueId=0&offset=-1", nil, nil, 400, []string{"offset"}},
		{"browse bad limit", "GET", "/v1/topics/orders/messages?queueId=0&limit=abc", nil, nil, 400, []string{"limit"}},

		// 403: system topics.
		{"create retry topic", "PUT", "/v1/topics/%25RETRY%25g1", nil, nil, 403, nil},
		{"publish to DLQ", "POST", "/v1/topics/%25DLQ%25g1/messages", map[string]any{"body": "x"}, nil, 403, nil},
		{"publish to schedule topic", "POST", "/v1/topics/SCHEDULE_TOPIC_XXXX/messages", map[string]any{"body": "x"}, nil, 403, nil},
		{"batch to retry topic", "POST", "/v1/topics/%25RETRY%25g1/messages/batch", map[string]any{"messages": []any{map[string]string{"body": "x"}}}, nil, 403, nil},
		{"delete retry topic", "DELETE", "/v1/topics/%25RETRY%25g1", nil, nil, 403, nil},

		// 404: unknown things and routes.
		{"unknown topic publish", "POST", "/v1/topics/nope/messages", map[string]any{"body": "x"}, nil, 404, nil},
		{"unknown topic batch", "POST", "/v1/topics/nope/messages/batch", map[string]any{"messages": []any{map[string]string{"body": "x"}}}, nil, 404, nil},
		{"unknown topic get", "GET", "/v1/topics/nope", nil, nil, 404, nil},
		{"unknown topic browse", "GET", "/v1/topics/nope/messages?queueId=0", nil, nil, 404, nil},
		{"unknown topic by key", "GET", "/v1/topics/nope/messages?key=k", nil, nil, 404, nil},
		{"unknown message", "GET", "/v1/topics/orders/messages/AAAAAAAAAAAAAAAAAAAAAAAA", nil, nil, 404, nil},
		{"unknown route", "GET", "/v1/nothing", nil, nil, 404, nil},
		{"unknown root", "GET", "/nothing", nil, nil, 404, nil},

		// 405: known path, wrong method.
		{"delete topic list", "DELETE", "/v1/topics", nil, nil, 405, nil},
		{"patch topic", "PATCH", "/v1/topics/orders", `{}`, nil, 405, nil},
		{"get batch", "GET", "/v1/topics/orders/messages/batch/x", nil, nil, 404, nil},

		// 409.
		{"shrink queues", "PUT", "/v1/topics/orders", map[string]int{"queues": 1}, nil, 409, nil},

		// 413: too large, single and batch.
		{"body over 4 MiB", "POST", "/v1/topics/orders/messages", map[string]any{"bodyBase64": big}, nil, 413, nil},
		{"batch over 4 MiB", "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": fiveMiB}, nil, 413, nil},
		{"JSON over the limit", "POST", "/v1/topics/orders/messages", `{"body":"` + strings.Repeat("x", 7<<20) + `"}`, nil, 413, nil},
		{"huge topic body", "PUT", "/v1/topics/t2", `{"queues":` + strings.Repeat(" ", 100<<10) + `1}`, nil, 413, nil},

		// 415: not JSON.
		{"text/plain", "POST", "/v1/topics/orders/messages", `{"body":"x"}`, []string{"Content-Type", "text/plain"}, 415, nil},
		{"no content type", "POST", "/v1/topics/orders/messages", `{"body":"x"}`, []string{"Content-Type", ""}, 415, nil},
		{"form", "PUT", "/v1/topics/t3", `queues=3`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.method, c.path, c.body, c.hdr...)
			wantProblem(t, r, c.status, c.fields...)
		})
	}

	// Nothing above changed anything: one topic, no messages.
	r := s.do(t, "GET", "/v1/topics", nil)
	var list struct{ Topics []topic }
	r.JSON(t, &list)
	if len(list.Topics) != 1 {
		t.Fatalf("rejected requests created topics: %s", r.Body)
	}
	r = s.do(t, "GET", "/v1/topics/orders", nil)
	var tp topic
	r.JSON(t, &tp)
	if tp.Queues != 2 || tp.Stats.Messages != 0 {
		t.Fatalf("rejected requests changed the topic: %s", r.Body)
	}

	// A 4 MiB body exactly is fine, as base64 and in a batch.
	exact := base64.StdEncoding.EncodeToString(make([]byte, core.MaxMessageSize))
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"bodyBase64": exact}), 201)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": []any{map[string]any{"bodyBase64": exact}}}), 201)
}

func TestRequestID(t *testing.T) {
	s := startServer(t, t.TempDir())
	r := s.do(t, "GET", "/healthz", nil, "X-Request-Id", "client-id.42:abc")
	if got := r.Header.Get("X-Request-Id"); got != "client-id.42:abc" {
		t.Fatalf("X-Request-Id %q: a sane incoming id must be echoed", got)
	}
	r = s.do(t, "GET", "/healthz", nil, "X-Request-Id", "bad id\twith spaces")
	if got := r.Header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \t") {
		t.Fatalf("X-Request-Id %q: an unsafe incoming id must be replaced", got)
	}
	ids := map[string]bool{}
	for i := range 5 {
		r = s.do(t, "GET", fmt.Sprintf("/v1/topics/t%d", i), nil)
		ids[r.Header.Get("X-Request-Id")] = true
	}
	if len(ids) != 5 {
		t.Fatalf("generated request ids are not unique: %v", ids)
	}
	// The 404's id is the one in the server's log line.
	p := wantProblem(t, r, 404)
	checkFor(t, 5e9, 5e7, func() error {
		if !strings.Contains(s.Logs(), p.RequestID) {
			return fmt.Errorf("request id %s not in the log", p.RequestID)
		}
		return nil
	})
}
