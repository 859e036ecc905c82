package e2e

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// TestBadInputMatrix sends what strict input refuses to the real binary:
// invalid UTF-8, lone surrogates, duplicate names, case-folded names,
// nulls where nothing is nullable, compressed bodies, lengths over the
// limits, and router-level errors. Each answers problem+json with its
// status and, for a field, the field's name; none changes anything.
func TestBadInputMatrix(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 2)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"body":"x"}`))
	_ = zw.Close()

	const pub = "/v1/topics/orders/messages"
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		hdr    []string
		status int
		fields []string
	}{
		// Strict JSON: one decoder for every body.
		{"invalid UTF-8 in a value", "POST", pub, "{\"body\":\"bad \xff byte\"}", nil, 400, []string{"body"}},
		{"invalid UTF-8 in a batch item", "POST", pub + "/batch", "{\"messages\":[{\"body\":\"ok\"},{\"body\":\"\xc3\x28\"}]}", nil, 400, []string{"messages[1].body"}},
		{"lone high surrogate", "POST", pub, `{"body":"\ud800"}`, nil, 400, []string{"body"}},
		{"lone low surrogate", "POST", pub, `{"body":"x\udc00y"}`, nil, 400, []string{"body"}},
		{"duplicate name", "POST", pub, `{"body":"x","body":"y"}`, nil, 400, []string{"body"}},
		{"duplicate property name", "POST", pub, `{"body":"x","properties":{"k":"1","k":"2"}}`, nil, 400, []string{"properties.k"}},
		{"duplicate in topic config", "PUT", "/v1/topics/t1", `{"queues":2,"queues":3}`, nil, 400, []string{"queues"}},
		{"upper-case name", "POST", pub, `{"BODY":"x"}`, nil, 400, []string{"BODY"}},
		{"title-case name", "PUT", "/v1/topics/t1", `{"Queues":2}`, nil, 400, []string{"Queues"}},
		{"case-folded group field", "PUT", "/v1/groups/g1", `{"Subscriptions":[{"topic":"orders"}]}`, nil, 400, []string{"Subscriptions"}},
		{"null body", "POST", pub, `{"body":null}`, nil, 400, []string{"body"}},
		{"null key", "POST", pub, `{"body":"x","keys":["a",null]}`, nil, 400, []string{"keys[1]"}},
		{"null tags", "POST", pub, `{"body":"x","tags":null}`, nil, 400, []string{"tags"}},
		{"bad deliverAt", "POST", pub, `{"body":"x","deliverAt":"tomorrow"}`, nil, 400, []string{"deliverAt"}},
		{"bad timestamp in a reset", "POST", "/v1/groups/g0/offsets/reset", `{"topic":"orders","position":"TIMESTAMP","timestamp":"yesterday"}`, nil, 400, []string{"timestamp"}},
		{"number out of range", "POST", pub, `{"body":"x","delayLevel":99999999999999999999}`, nil, 400, []string{"delayLevel"}},
		{"fraction for an integer", "PUT", "/v1/topics/t1", `{"queues":1.5}`, nil, 400, []string{"queues"}},

		// Lengths and shapes.
		{"tags over 128", "POST", pub, map[string]any{"body": "x", "tags": strings.Repeat("t", 129)}, nil, 400, []string{"tags"}},
		{"key over 128", "POST", pub, map[string]any{"body": "x", "keys": []string{strings.Repeat("k", 129)}}, nil, 400, []string{"keys[0]"}},
		{"33 keys", "POST", pub, map[string]any{"body": "x", "keys": make([]string, 33)}, nil, 400, []string{"keys"}},
		{"empty property name", "POST", pub, map[string]any{"body": "x", "properties": map[string]string{"": "v"}}, nil, 400, nil},
		{"bodyBase64 not base64", "POST", pub, map[string]any{"bodyBase64": "a-_9"}, nil, 400, []string{"bodyBase64"}},
		{"bodyBase64 too short", "POST", pub, map[string]any{"bodyBase64": "AA="}, nil, 400, []string{"bodyBase64"}},
		{"query key over 128", "GET", pub + "?key=" + strings.Repeat("k", 129), nil, nil, 400, []string{"key"}},
		{"bad consumerId", "POST", "/v1/groups/g0/receive", `{"consumerId":"a b"}`, nil, 400, []string{"consumerId"}},

		// Encodings.
		{"gzip body", "POST", pub, gz.Bytes(), []string{"Content-Encoding", "gzip"}, 415, nil},
		{"br body", "PUT", "/v1/topics/t1", `{}`, []string{"Content-Encoding", "br"}, 415, nil},
		{"text/plain", "POST", pub, `{"body":"x"}`, []string{"Content-Type", "text/plain"}, 415, nil},

		// Router-level errors are problem+json too.
		{"unknown path", "GET", "/v2/topics", nil, nil, 404, nil},
		{"unknown /v1 path", "GET", "/v1/queues", nil, nil, 404, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.method, c.path, c.body, c.hdr...)
			wantProblem(t, r, c.status, c.fields...)
		})
	}

	// Identity is not an encoding: the body is taken as it is.
	want(t, s.do(t, "POST", pub, `{"body":"x"}`, "Content-Encoding", "identity"), http.StatusCreated)
	// null where the document says nullable: consumeFrom.timestamp.
	r := s.do(t, "PUT", "/v1/groups/g1", `{"subscriptions":[{"topic":"orders"}],"consumeFrom":{"position":"LAST_OFFSET","timestamp":null}}`)
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("no gateway wired")
	}
	want(t, r, http.StatusCreated)

	// Nothing above changed anything but the one message and the group.
	r = s.do(t, "GET", "/v1/topics/orders", nil)
	var tp topic
	r.JSON(t, &tp)
	if tp.Stats.Messages != 1 {
		t.Fatalf("rejected requests stored messages: %s", r.Body)
	}
	r = s.do(t, "GET", "/v1/topics", nil)
	if strings.Contains(string(r.Body), `"t1"`) {
		t.Fatalf("a rejected PUT created t1: %s", r.Body)
	}
}

// TestMethodNotAllowed checks the 405s: problem+json with an Allow header
// listing exactly the methods the path has.
func TestMethodNotAllowed(t *testing.T) {
	s := startServer(t, t.TempDir())
	for _, c := range []struct {
		method, path, allow string
	}{
		{"DELETE", "/v1/topics", "GET"},
		{"PATCH", "/v1/topics/orders", "GET, PUT, DELETE"},
		{"GET", "/v1/groups/g/ack", "POST"},
		{"POST", "/healthz", "GET, HEAD"},
		{"PUT", "/metrics", "GET"},
	} {
		r := s.do(t, c.method, c.path, nil)
		wantProblem(t, r, http.StatusMethodNotAllowed)
		if got := r.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}
