package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// publishBodies are the seeds of the fast-path tests: the shapes clients
// send, and the ones the fast path must hand to encoding/json.
var publishBodies = []string{
	`{"body":"x"}`, ` { "body" : "hello world" , "tags" : "TagA" } ` + "\n",
	`{"bodyBase64":"AAE="}`, `{"body":"x","bodyBase64":"eA=="}`, `{}`, ``, ` `,
	`{"body":"x","delayLevel":3,"keys":["a","b"],"properties":{"k":"v","k2":""}}`,
	`{"body":"x","keys":[],"properties":{}}`, `{"body":"x","properties":{"k":"1","k":"2"}}`,
	`{"body":"x","delaySeconds":0}`, `{"body":"x","delaySeconds":-0}`, `{"body":"x","delaySeconds":-5}`,
	`{"body":"x","delayLevel":0}`, `{"body":"x","delayLevel":01}`, `{"body":"x","delayLevel":1.0}`,
	`{"body":"x","delayLevel":1e2}`, `{"body":"x","delayLevel":99999999999999999999}`,
	`{"body":"x","delaySeconds":3456001}`, `{"body":"x","delayLevel":"3"}`, `{"body":"x","delayLevel":null}`,
	`{"body":"héllo 世界"}`, "{\"body\":\"bad \xff utf8\"}", `{"body":"tab\tinside"}`,
	`{"body":"esc \" \\ \n \u00e9"}`, `{"Body":"case"}`, `{"body":"x","body":"y"}`, `{"body":"x","extra":1}`,
	`{"body":"x"} {}`, `{"body":"x"} x`, `{"body":"x",}`, `{"body":"x"`, `{"body":1}`, `[]`, `null`,
	`{"deliverAt":"2026-01-02T15:04:05.000Z","body":"x"}`, `{"tags":"a||b","body":"x"}`,
	`{"body":"x","shardingKey":"` + strings.Repeat("k", 129) + `"}`, `{"body":"x","tags":"` + strings.Repeat("é", 100) + `"}`,
	`{"body":"x","keys":["a",""]}`, `{"body":"x","keys":["a",1]}`, `{"body":"x","properties":{"":"v"}}`,
	`{"body":"x","properties":{"k":null}}`, `{"messages":[{"body":"x"}]}`,
}

// checkPublishFast is the fast path's contract, checked on one body:
//   - decodePublish answers exactly as decodeJSON (result and error text);
//   - whatever parsePublishFast accepts, encoding/json accepts with the
//     same result.
func checkPublishFast(t *testing.T, s *Server, body string, limit int64) {
	t.Helper()
	var slow, fast PublishRequest
	errSlow := decodeJSON(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), limit, &slow, false)
	errFast := decodePublish(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), limit, &fast)
	if fmt.Sprint(errSlow) != fmt.Sprint(errFast) || !reflect.DeepEqual(slow, fast) {
		t.Fatalf("body %q:\n decodeJSON    %v %+v\n decodePublish %v %+v", body, errSlow, slow, errFast, fast)
	}
	var parsed PublishRequest
	if parsePublishFast([]byte(body), &parsed) {
		var want PublishRequest
		if err := decodeJSONFrom(bytes.NewReader([]byte(body)), &want, false); err != nil || !reflect.DeepEqual(parsed, want) {
			t.Fatalf("body %q: fast path %+v, encoding/json %+v (%v)", body, parsed, want, err)
		}
	}
}

func TestPublishFastPathMatchesEncodingJSON(t *testing.T) {
	s := New(Options{})
	for _, body := range publishBodies {
		checkPublishFast(t, s, body, maxPublishJSON)
		// A limit inside the body: the 413 (or an earlier syntax error)
		// must come out the same.
		checkPublishFast(t, s, body, int64(len(body)/2))
	}
	// The common case really takes the fast path.
	var req PublishRequest
	if !parsePublishFast([]byte(`{"body":"order 17","tags":"created","keys":["k1"],"properties":{"a":"b"},"shardingKey":"c9","delayLevel":2}`), &req) {
		t.Fatal("a plain publish body missed the fast path")
	}
}

func FuzzPublishFastPath(f *testing.F) {
	for _, body := range publishBodies {
		f.Add(body, uint16(0))
	}
	s := New(Options{})
	f.Fuzz(func(t *testing.T, body string, limit uint16) {
		l := int64(maxPublishJSON)
		if limit > 0 {
			l = int64(limit)
		}
		checkPublishFast(t, s, body, l)
	})
}

// putOnlyEngine answers Put at once; the benchmark below measures the
// HTTP layer alone (the engine and store have their own benchmarks).
type putOnlyEngine struct{ Engine }

func (putOnlyEngine) Put(_ context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error) {
	out := make([]core.PutResult, len(msgs))
	for i := range out {
		out[i] = core.PutResult{MessageID: "0a1b2c3d4e5f60718293a4b5c6", Topic: topic, QueueID: 3, QueueOffset: int64(i)}
	}
	return out, nil
}

// BenchmarkPublishHandler runs a 1 KiB single publish through the whole
// router and middleware (request id, log line, metrics, content type,
// decode, validation, answer), logging JSON to io.Discard.
//
//	go test -run XXX -bench PublishHandler -benchmem ./api
func BenchmarkPublishHandler(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Engine: putOnlyEngine{}, Logger: &log})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/topics/orders/messages", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
