package jetstream

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// JetStream API error codes the backend acts on (nats-server's
// jetstream_errors_generated.go).
const (
	errCodeUnavailable          jsapi.ErrorCode = 10008 // "JetStream system temporarily unavailable" (no leader known yet)
	errCodeStreamNotFound       jsapi.ErrorCode = 10059
	errCodeConsumerCreate       jsapi.ErrorCode = 10012 // a consumer create or update refused, e.g. "deliver policy can not be updated"
	errCodeNoMessageFound       jsapi.ErrorCode = 10037 // a message delete or get of a sequence that is not stored
	errCodeReplicasNotClustered jsapi.ErrorCode = 10074 // "replicas > 1 not supported in non-clustered mode"
	errCodeDuplicateInProcess                   = 10158 // the same Nats-Msg-Id is being stored by another publish
	errCodeBatchDuplicate                       = 10201 // an atomic batch holds a Nats-Msg-Id already stored
)

// retryable reports a JetStream condition that passes by itself within
// moments: no leader elected or known yet (a node rejoining after a
// partition answers 10008 until it learns the leader), a request that
// timed out during an election, a connection reconnecting.
func retryable(err error) bool {
	var ae *jsapi.APIError
	if errors.As(err, &ae) {
		return ae.Code == 503
	}
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, jsapi.ErrNoHeartbeat)
}

// Reads retry retryable errors with backoff for at most readRetryFor; what
// still fails after that answers 503 (mapErr), never 500.
const (
	readRetryFor   = 2 * time.Second
	readRetryFirst = 25 * time.Millisecond
	readRetryMax   = 400 * time.Millisecond
)

// retryRead runs one read (or an idempotent request: a create-or-update)
// until it succeeds, fails with a non-retryable error, or readRetryFor
// (or ctx) ends.
func (b *Backend) retryRead(ctx context.Context, fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(readRetryFor)
	wait := readRetryFirst
	var t *time.Timer
	for {
		err := fn(ctx)
		if err == nil || !retryable(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		if t == nil {
			t = time.NewTimer(wait)
			defer t.Stop()
		} else {
			t.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return err
		case <-b.stop:
			return err
		case <-t.C:
		}
		wait = min(2*wait, readRetryMax)
	}
}

// mapErr turns JetStream errors into core errors: not found → 404,
// anything transient (no leader, timeouts, a 503 from the JetStream API,
// a publish no stream answered, the connection down) → 503 with Retry-After.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	var ae *jsapi.APIError
	switch {
	case errors.Is(err, jsapi.ErrStreamNotFound), errors.Is(err, jsapi.ErrConsumerNotFound),
		errors.Is(err, jsapi.ErrMsgNotFound), errors.Is(err, jsapi.ErrKeyNotFound):
		return core.Errorf(core.ENotFound, "not found")
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, jsapi.ErrNoHeartbeat), errors.Is(err, nats.ErrConnectionReconnecting),
		// A publish (a KV put: a nack's lease override) that no stream
		// leader answered, as during an election: the fault run's one 500.
		errors.Is(err, jsapi.ErrNoStreamResponse),
		errors.As(err, &ae) && ae.Code == 503:
		return core.Errorf(core.EUnavailable, "JetStream unavailable: %v", err)
	}
	return err
}

// stream is js.Stream (stream info, a read) with retryRead.
func (b *Backend) stream(ctx context.Context, name string) (jsapi.Stream, error) {
	var s jsapi.Stream
	err := b.retryRead(ctx, func(ctx context.Context) (err error) {
		s, err = b.js.Stream(ctx, name)
		return err
	})
	return s, err
}

// consumer is js.Consumer (consumer info, a read) with retryRead.
func (b *Backend) consumer(ctx context.Context, stream, name string) (jsapi.Consumer, error) {
	var c jsapi.Consumer
	err := b.retryRead(ctx, func(ctx context.Context) (err error) {
		c, err = b.js.Consumer(ctx, stream, name)
		return err
	})
	return c, err
}
