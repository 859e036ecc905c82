package api

import (
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// sameChecks compares the hand check of req with the validator's verdict
// on its tags: the same fields, messages and order. Properties are
// visited in map order by both, so with more than one the order is
// not compared.
func sameChecks(t *testing.T, s *Server, req checker, unordered bool) {
	t.Helper()
	var got, want fieldErrors
	req.check(&got)
	s.checkTags(req, &want)
	if unordered {
		less := func(a, b FieldProblem) int { return strings.Compare(a.Field+a.Message, b.Field+b.Message) }
		slices.SortFunc(got, less)
		slices.SortFunc(want, less)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("hand check %q\nvalidator  %q", got, want)
	}
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func ptr[T any](v T) *T { return &v }

func repeat(s string, n int) string { return strings.Repeat(s, n) }

func nOf(s string, n int) []string { return slices.Repeat([]string{s}, n) }

// randomPublish draws a publish request whose fields sit on and around
// the limits of its validate tags.
func randomPublish(r *rand.Rand) *PublishRequest {
	text := []string{"", "a", "a||b", "||", "|", "a|b", repeat("x", 128), repeat("x", 129), repeat("é", 128), repeat("é", 129), repeat("x", 129) + "||", repeat("é", 64)}
	b64 := []*string{nil, ptr(""), ptr("A"), ptr("AAA"), ptr("AAAA"), ptr("AA=="), ptr("AAA="), ptr("A==="), ptr("===="), ptr("éé"),
		ptr("ééé"), ptr("éééé"), ptr("AAAAA"), ptr("AA=A"), ptr("AB\nC"), ptr("AAAAAAAA"), ptr("AAAAAAA="), ptr("AAAAAA=="),
		ptr("AAAAA==="), ptr(repeat("A", 16)), ptr("éé=="), ptr("+/+/"), ptr("-_-_"), ptr("AAA=AAAA"), ptr("aé=="), ptr(repeat("é", 3) + "A")}
	keys := [][]string{nil, {}, {"a"}, {"", "b"}, {"a", ""}, {repeat("k", 128)}, {repeat("k", 129)}, {repeat("é", 129)}, {"a", repeat("k", 129), ""},
		nOf("k", 32), nOf("k", 33), append(nOf("k", 32), "")}
	props := []map[string]string{nil, {}, {"k": "v"}, {"": "v"}, {repeat("k", 129): "v"}, {"k": repeat("v", 4097)}, {"k": repeat("é", 4096)},
		{"": repeat("v", 4097)}, {repeat("k", 129): repeat("v", 4097)}, {repeat("é", 128): ""}, {"a": "", "": "x", "b": repeat("v", 4097)}}
	many := map[string]string{}
	for i := range 64 {
		many[repeat("p", i+1)] = "v"
	}
	props = append(props, many)
	more := map[string]string{"": "v"}
	for k, v := range many {
		more[k] = v
	}
	props = append(props, more)
	req := &PublishRequest{
		BodyBase64:  pick(r, b64),
		Tags:        pick(r, text),
		Keys:        pick(r, keys),
		Properties:  pick(r, props),
		ShardingKey: pick(r, text),
		DelayLevel:  pick(r, []*int{nil, ptr(-1), ptr(0), ptr(1), ptr(18), ptr(100)}),
		DelaySeconds: pick(r, []*int64{nil, ptr[int64](-1), ptr[int64](0), ptr[int64](1), ptr[int64](maxDelaySeconds),
			ptr[int64](maxDelaySeconds + 1)}),
	}
	if r.IntN(2) == 0 {
		req.Body = ptr("x")
	}
	return req
}

// TestHandChecksMatchTags holds every hand check (check.go) to the
// validator on the same values: the tags are the rules, the checks are
// their fast spelling.
func TestHandChecksMatchTags(t *testing.T) {
	s := New(Options{})
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		req := randomPublish(r)
		sameChecks(t, s, req, len(req.Properties) > 1)
	}
	batches := []*PublishBatchRequest{{}, {Messages: []PublishRequest{}}, {Messages: make([]PublishRequest, 1001)}}
	for range 2000 {
		b := &PublishBatchRequest{}
		for range 1 + r.IntN(4) {
			b.Messages = append(b.Messages, *randomPublish(r))
		}
		batches = append(batches, b)
	}
	for _, b := range batches {
		unordered := false
		for _, m := range b.Messages {
			unordered = unordered || len(m.Properties) > 1
		}
		sameChecks(t, s, b, unordered)
	}
	handles := [][]string{nil, {}, {""}, {"h"}, {repeat("h", 1024)}, {repeat("h", 1025)}, {repeat("é", 1024)}, {repeat("é", 1025)},
		{"a", repeat("h", 1025), "", repeat("h", 2000)}, nOf("h", 100), nOf("h", 101), append(nOf("h", 99), repeat("h", 1025))}
	for _, h := range handles {
		sameChecks(t, s, &AckRequest{ReceiptHandles: h}, false)
		for _, level := range []int{-2, -1, 0, 5} {
			for _, reason := range []string{"", "r", repeat("r", 256), repeat("r", 257), repeat("é", 256), repeat("é", 257)} {
				sameChecks(t, s, &NackRequest{ReceiptHandles: h, DelayLevel: level, Reason: reason}, false)
			}
		}
		for _, inv := range []int{-1, 0, 1, 60, 43200, 43201, 1 << 40} {
			sameChecks(t, s, &ExtendRequest{ReceiptHandles: h, InvisibleSeconds: inv}, false)
		}
	}
	ints := []*int{nil, ptr(-1), ptr(0), ptr(1), ptr(29), ptr(30), ptr(31), ptr(32), ptr(33), ptr(43200), ptr(43201)}
	ids := []string{"", "c1", "a.b-c_d", "a b", "é", "%RETRY%x", repeat("c", 127), repeat("c", 128), "-x", "x/y"}
	for range 5000 {
		sameChecks(t, s, &ReceiveRequest{MaxMessages: pick(r, ints), WaitSeconds: pick(r, ints),
			InvisibleSeconds: pick(r, ints), ConsumerID: pick(r, ids)}, false)
	}
}

// FuzzHandCheckPublish decodes publish bodies and compares the hand check
// with the validator on whatever decodes.
func FuzzHandCheckPublish(f *testing.F) {
	for _, body := range publishBodies {
		f.Add(body)
	}
	f.Add(`{"bodyBase64":"AA\u003d\u003d","tags":"a|\u007cb","keys":["",""],"delaySeconds":3456001}`)
	s := New(Options{})
	f.Fuzz(func(t *testing.T, body string) {
		var req PublishRequest
		if decodePublish(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), maxPublishJSON, &req) != nil {
			return
		}
		sameChecks(t, s, &req, len(req.Properties) > 1)
	})
}

// TestRoutePatternCache: the cached route label is chi's RoutePattern
// for every route, the first time and after.
func TestRoutePatternCache(t *testing.T) {
	s := New(Options{})
	mux := s.handler.(chi.Routes)
	for _, path := range []string{"/v1/topics/orders/messages", "/v1/topics/orders/messages/batch", "/v1/groups/g/ack",
		"/healthz", "/v1/topics/orders", "/console/x/y", "/v1/nothing/here", "/"} {
		for _, method := range []string{"GET", "POST"} {
			rc := chi.NewRouteContext()
			mux.Match(rc, method, path)
			want := rc.RoutePattern()
			for range 2 {
				if got := routePattern(rc); got != want {
					t.Errorf("%s %s: %q, want %q", method, path, got, want)
				}
			}
		}
	}
}
