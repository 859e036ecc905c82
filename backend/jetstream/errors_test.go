package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// 10008 ("JetStream system temporarily unavailable", answered by a node
// that rejoined and does not know the leader yet), other 503s from the
// JetStream API and a publish no stream answered are unavailable (503 with Retry-After), never a 500.
func TestMapErrUnavailable(t *testing.T) {
	for _, err := range []error{
		&jsapi.APIError{Code: 503, ErrorCode: errCodeUnavailable, Description: "JetStream system temporarily unavailable"},
		fmt.Errorf("group config: %w", &jsapi.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}),
		// What a KV put (a nack's lease override) returns when no stream
		// leader answers, during an election; e2e/TestJetStreamFaults got
		// it as a 500 on a nack after a SIGSTOP of the stream leader.
		jsapi.ErrNoStreamResponse,
	} {
		var ce *core.Error
		if !errors.As(mapErr(err), &ce) || ce.Code != core.EUnavailable {
			t.Fatalf("mapErr(%v) = %v, want %s", err, mapErr(err), core.EUnavailable)
		}
	}
	var ce *core.Error
	if errors.As(mapErr(&jsapi.APIError{Code: 400, ErrorCode: 10003}), &ce) && ce.Code == core.EUnavailable {
		t.Fatal("a bad request mapped to unavailable")
	}
}

// retryRead retries a retryable read with backoff until it succeeds, and
// gives up after readRetryFor; a non-retryable error is not retried.
func TestRetryRead(t *testing.T) {
	b := &Backend{stop: make(chan struct{})}
	unavailable := &jsapi.APIError{Code: 503, ErrorCode: errCodeUnavailable}
	calls := 0
	err := b.retryRead(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return unavailable
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("retryRead = %v after %d calls, want success on the 3rd", err, calls)
	}
	calls = 0
	start := time.Now()
	err = b.retryRead(context.Background(), func(context.Context) error { calls++; return unavailable })
	if !errors.Is(err, unavailable) || calls < 3 || time.Since(start) > readRetryFor+time.Second {
		t.Fatalf("always unavailable: %v after %d calls in %s", err, calls, time.Since(start))
	}
	calls = 0
	if err := b.retryRead(context.Background(), func(context.Context) error { calls++; return jsapi.ErrMsgNotFound }); !errors.Is(err, jsapi.ErrMsgNotFound) || calls != 1 {
		t.Fatalf("not found: %v after %d calls, want no retry", err, calls)
	}
}
