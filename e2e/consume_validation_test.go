package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestConsumeValidation: every limit of API.md "Consuming" on the receive,
// ack, nack and extend bodies answers 400 problem+json naming the field;
// an unknown group is 404 and a push group answers receive with 409. A
// rejected request changes nothing: the message published first is still
// there to receive at the end.
func TestConsumeValidation(t *testing.T) {
	// The push group's URL is on loopback, which the network guard refuses
	// at PUT unless allowed.
	t.Setenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK", "true")
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "v", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	want(t, s.do(t, "PUT", "/v1/groups/hook", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"push":          map[string]any{"url": "http://127.0.0.1:9/hook"},
	}), http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "keep"}), http.StatusCreated)

	h := strings.Repeat("A", 40)
	long := strings.Repeat("x", 1025)
	many := make([]string, 101)
	for i := range many {
		many[i] = h
	}
	cases := []struct {
		path   string
		body   any
		fields []string
	}{
		{"receive", map[string]any{"maxMessages": 0}, []string{"maxMessages"}},
		{"receive", map[string]any{"maxMessages": 33}, []string{"maxMessages"}},
		{"receive", map[string]any{"waitSeconds": -1}, []string{"waitSeconds"}},
		{"receive", map[string]any{"waitSeconds": 31}, []string{"waitSeconds"}},
		{"receive", map[string]any{"invisibleSeconds": 0}, []string{"invisibleSeconds"}},
		{"receive", map[string]any{"invisibleSeconds": 43201}, []string{"invisibleSeconds"}},
		{"receive", map[string]any{"consumerId": strings.Repeat("c", 128)}, []string{"consumerId"}},
		{"receive", map[string]any{"maxMessages": 40, "waitSeconds": 40, "invisibleSeconds": 0},
			[]string{"maxMessages", "waitSeconds", "invisibleSeconds"}}, // all at once
		{"receive", map[string]any{"maxMessages": "ten"}, []string{"maxMessages"}},
		{"receive", `{"maxMessages": 1, "max_messages": 2}`, nil}, // unknown field
		{"receive", `{"maxMessages": 1`, nil},                     // malformed
		{"ack", map[string]any{}, []string{"receiptHandles"}},
		{"ack", map[string]any{"receiptHandles": []string{}}, []string{"receiptHandles"}},
		{"ack", map[string]any{"receiptHandles": many}, []string{"receiptHandles"}},
		{"ack", map[string]any{"receiptHandles": []string{long}}, nil},
		{"ack", "", nil}, // an ack needs a body
		{"nack", map[string]any{"receiptHandles": []string{h}, "delayLevel": -2}, []string{"delayLevel"}},
		{"nack", map[string]any{"delayLevel": 1}, []string{"receiptHandles"}},
		{"extend", map[string]any{"receiptHandles": []string{h}}, []string{"invisibleSeconds"}},
		{"extend", map[string]any{"receiptHandles": []string{h}, "invisibleSeconds": 0}, []string{"invisibleSeconds"}},
		{"extend", map[string]any{"receiptHandles": []string{h}, "invisibleSeconds": 43201}, []string{"invisibleSeconds"}},
		{"extend", map[string]any{"receiptHandles": many, "invisibleSeconds": 60}, []string{"receiptHandles"}},
	}
	for _, c := range cases {
		r := s.do(t, "POST", "/v1/groups/v/"+c.path, c.body)
		p := wantProblem(t, r, http.StatusBadRequest, c.fields...)
		if len(c.fields) > 1 && len(p.Errors) < len(c.fields) {
			t.Fatalf("%s %v: %d field errors, want all %d at once: %s", c.path, c.body, len(p.Errors), len(c.fields), r.Body)
		}
	}

	// An empty or garbage handle is not a bad request: it is that entry's
	// result, invalid, and the others are answered as usual.
	for path, extra := range map[string]string{"ack": "", "nack": `,"delayLevel":1`, "extend": `,"invisibleSeconds":60`} {
		r := s.do(t, "POST", "/v1/groups/v/"+path, `{"receiptHandles":["`+h+`","","garbage!"]`+extra+`}`)
		want(t, r, http.StatusOK)
		var res struct {
			Results []struct{ ReceiptHandle, Status string }
		}
		r.JSON(t, &res)
		if len(res.Results) != 3 || res.Results[1].ReceiptHandle != "" || res.Results[1].Status != "invalid" || res.Results[2].Status != "invalid" {
			t.Fatalf("%s with an empty and a garbage handle: %s", path, r.Body)
		}
	}

	// Wrong content type.
	wantProblem(t, s.do(t, "POST", "/v1/groups/v/ack", `{"receiptHandles":["x"]}`, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)

	// Unknown group: 404 on every consuming route.
	for path, body := range map[string]any{
		"receive": map[string]any{},
		"ack":     map[string]any{"receiptHandles": []string{h}},
		"nack":    map[string]any{"receiptHandles": []string{h}, "delayLevel": 1},
		"extend":  map[string]any{"receiptHandles": []string{h}, "invisibleSeconds": 5},
	} {
		wantProblem(t, s.do(t, "POST", "/v1/groups/nope/"+path, body), http.StatusNotFound)
	}
	wantProblem(t, s.do(t, "GET", "/v1/groups/nope/offsets", nil), http.StatusNotFound)

	// A push group has no receive.
	wantProblem(t, s.do(t, "POST", "/v1/groups/hook/receive", map[string]any{"waitSeconds": 1}), http.StatusConflict)

	// Forged and malformed handles are per-handle results, not errors.
	for path, body := range map[string]map[string]any{
		"ack":    {},
		"nack":   {"delayLevel": 1},
		"extend": {"invisibleSeconds": 5},
	} {
		body["receiptHandles"] = []string{h, "not a handle"}
		var res handleResults
		r := s.do(t, "POST", "/v1/groups/v/"+path, body)
		want(t, r, http.StatusOK)
		r.JSON(t, &res)
		if len(res.Results) != 2 || res.Results[0].Status != "invalid" || res.Results[1].Status != "invalid" ||
			res.Results[0].ReceiptHandle != h {
			t.Fatalf("%s of forged handles: %s", path, r.Body)
		}
	}

	// The largest body the limits allow (100 handles of 1,024 characters)
	// is read, not refused as too large.
	biggest := make([]string, 100)
	for i := range biggest {
		biggest[i] = strings.Repeat("B", 1024)
	}
	for path, body := range map[string]map[string]any{
		"ack":    {"receiptHandles": biggest},
		"nack":   {"receiptHandles": biggest, "delayLevel": 18},
		"extend": {"receiptHandles": biggest, "invisibleSeconds": 43200},
	} {
		var res handleResults
		r := s.do(t, "POST", "/v1/groups/v/"+path, body)
		want(t, r, http.StatusOK)
		r.JSON(t, &res)
		if len(res.Results) != 100 || res.Results[99].Status != "invalid" {
			t.Fatalf("%s of 100 long handles: %d results", path, len(res.Results))
		}
	}

	// None of it changed anything.
	got := receive(t, s, "v", map[string]any{"maxMessages": 32, "waitSeconds": 5})
	if len(got) != 1 || got[0].Body != "keep" {
		t.Fatalf("after the rejected requests: %+v", got)
	}
}
