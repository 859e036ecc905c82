package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// publishBodies are the seeds of the decoder fuzz test: the shapes
// clients send, and the ones the strict decoder refuses.
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

// FuzzPublishStrict feeds the publish bodies (and mutations) through the
// one strict decoder: whatever it accepts is valid UTF-8 JSON without
// duplicate names that encoding/json decodes to the very same request
// (the strict decoder only refuses more, it never reads differently).
func FuzzPublishStrict(f *testing.F) {
	for _, body := range publishBodies {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var got PublishRequest
		err := decodePublish(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), maxPublishJSON, &got)
		if err != nil {
			if core.ErrorCode(err) != core.EInvalid {
				t.Fatalf("body %q: %v, want an invalid answer", body, err)
			}
			return
		}
		if !utf8.ValidString(body) {
			t.Fatalf("accepted invalid UTF-8 %q", body)
		}
		var want PublishRequest
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q: strict %+v, encoding/json %+v (%v)", body, got, want, err)
		}
	})
}

// putOnlyEngine answers Put at once; the benchmark below measures the
// HTTP layer alone (the engine and store have their own benchmarks).
type putOnlyEngine struct{ core.Backend }

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
	s := New(Options{Backend: putOnlyEngine{}, Logger: &log})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	benchPost(b, s, "/v1/topics/orders/messages", body)
}

// benchPost serves one POST of body per iteration, expecting a 201.
func benchPost(b *testing.B, s *Server, path string, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	cpu0 := processCPU()
	for b.Loop() {
		r := httptest.NewRequest("POST", path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	if s.tracer != nil {
		_ = s.tracer.Shutdown(context.Background()) // the queued spans' export counts too
	}
	// Process CPU per op: the span exporter's goroutine too, which ns/op
	// (the loop's wall time) misses on a machine with idle cores.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkPublishBatchHandler is BenchmarkPublishHandler for a batch of
// 100 messages of 1 KiB (mqbench publish --batch 100).
//
//	go test -run XXX -bench PublishBatchHandler -benchmem ./api
func BenchmarkPublishBatchHandler(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: putOnlyEngine{}, Logger: &log})
	msg := `{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`
	body := []byte(`{"messages":[` + strings.Repeat(msg+",", 99) + msg + `]}`)
	benchPost(b, s, "/v1/topics/orders/messages/batch", body)
}

// ackOnlyService answers every handle ok at once (and Put as
// putOnlyEngine). BenchmarkAckHandler measures the HTTP layer of an ack.
type ackOnlyService struct{ putOnlyEngine }

func (ackOnlyService) Ack(_ context.Context, _ string, handles []string) ([]core.HandleResult, error) {
	out := make([]core.HandleResult, len(handles))
	for i, h := range handles {
		out[i] = core.HandleResult{ReceiptHandle: h, Status: core.HandleOK}
	}
	return out, nil
}

// BenchmarkAckHandler runs an ack of one handle (mqbench consume
// --ack-batch 1) through the router and middleware.
//
//	go test -run XXX -bench AckHandler -benchmem ./api
func BenchmarkAckHandler(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: ackOnlyService{}, Logger: &log})
	body := []byte(`{"receiptHandles":["AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYgAZemsOuwrq34JQIA"]}`)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/groups/g1/ack", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
