package engine

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTest opens an engine on a fresh temp dir (or dir, if given) and closes
// it at the end of the test.
func openTest(t testing.TB, opts Options) *Engine {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	e, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func mustTopic(t testing.TB, e *Engine, name string, queues int) {
	t.Helper()
	if _, _, err := e.PutTopic(core.TopicConfig{Name: name, Queues: queues}); err != nil {
		t.Fatalf("PutTopic(%s): %v", name, err)
	}
}

func text(s string) core.PutMessage { return core.PutMessage{Body: []byte(s), BodyIsText: true} }

func mustPut(t testing.TB, e *Engine, topic string, msgs ...core.PutMessage) []core.PutResult {
	t.Helper()
	res, err := e.Put(t.Context(), topic, msgs)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return res
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := core.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// checkFor retries fn until it succeeds or timeout passes (nats-server's
// checkFor): for conditions reached by background work.
func checkFor(t testing.TB, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", timeout, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
