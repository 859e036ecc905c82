package webhook

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// A receiver that cannot be reached leaves the connection error as the
// messages' nack reason.
func TestConnectionErrorIsTheNackReason(t *testing.T) {
	srv := receiver(t, func(http.ResponseWriter, *http.Request) {})
	url := srv.URL
	srv.Close() // nothing listens there any more
	p := newTestPusher(t, core.PushConfig{URL: url}, Options{AllowLoopback: true})
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 1)))
	rec.wait(t, 1, 10*time.Second)
	a, _ := rec.get("m-0")
	if a.ok || !strings.HasPrefix(a.reason, "webhook connection after ") || !strings.Contains(a.reason, "refused") {
		t.Fatalf("answer %+v: want a nack whose reason is the connection error", a)
	}
	if n := len([]rune(a.reason)); n > core.MaxReasonLength {
		t.Fatalf("reason of %d characters", n)
	}
}

func TestClipReason(t *testing.T) {
	long := strings.Repeat("é", 300)
	if got := core.ClipReason(long); len([]rune(got)) != core.MaxReasonLength || !strings.HasSuffix(got, "…") {
		t.Fatalf("ClipReason(300 é) = %d characters", len([]rune(got)))
	}
	if got := core.ClipReason(" a\nb\x00 "); got != "a b" {
		t.Fatalf("ClipReason = %q", got)
	}
}
