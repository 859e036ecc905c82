package e2e

import (
	"regexp"
	"testing"
)

// rfc3339ms is API.md's time format: UTC with milliseconds.
var rfc3339ms = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestTopicsCRUD(t *testing.T) {
	s := startServer(t, t.TempDir())

	r := s.do(t, "PUT", "/v1/topics/orders", map[string]int{"queues": 4, "retentionHours": 24})
	want(t, r, 201)
	var tp topic
	r.JSON(t, &tp)
	if tp.Name != "orders" || tp.Queues != 4 || tp.RetentionHours != 24 || !rfc3339ms.MatchString(tp.CreatedAt) {
		t.Fatalf("created topic %+v", tp)
	}

	// Update: grows queues, keeps retention it was not told about.
	r = s.do(t, "PUT", "/v1/topics/orders", map[string]int{"queues": 6})
	want(t, r, 200)
	r.JSON(t, &tp)
	if tp.Queues != 6 || tp.RetentionHours != 24 {
		t.Fatalf("updated topic %+v, want 6 queues and 24h", tp)
	}

	// Shrinking is a conflict and changes nothing.
	wantProblem(t, s.do(t, "PUT", "/v1/topics/orders", map[string]int{"queues": 2}), 409)

	// Defaults, with no body at all.
	r = s.do(t, "PUT", "/v1/topics/payments", nil)
	want(t, r, 201)
	r.JSON(t, &tp)
	if tp.Queues != 8 || tp.RetentionHours != 72 {
		t.Fatalf("default topic %+v, want 8 queues and 72h", tp)
	}

	r = s.do(t, "GET", "/v1/topics/orders", nil)
	want(t, r, 200)
	tp = topic{}
	r.JSON(t, &tp)
	if tp.Queues != 6 || tp.Stats == nil || len(tp.Stats.Queues) != 6 || tp.Stats.Messages != 0 {
		t.Fatalf("GET topic %s", r.Body)
	}

	r = s.do(t, "GET", "/v1/topics", nil)
	want(t, r, 200)
	var list struct{ Topics []topic }
	r.JSON(t, &list)
	if len(list.Topics) != 2 || list.Topics[0].Name != "orders" || list.Topics[1].Name != "payments" {
		t.Fatalf("list %s", r.Body)
	}

	want(t, s.do(t, "DELETE", "/v1/topics/orders", nil), 204)
	wantProblem(t, s.do(t, "GET", "/v1/topics/orders", nil), 404)
	wantProblem(t, s.do(t, "DELETE", "/v1/topics/orders", nil), 404)
	wantProblem(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]string{"body": "x"}), 404)
}
