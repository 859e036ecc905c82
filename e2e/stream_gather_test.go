package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// A publish stream stores the plain publishes it has in flight together
// (api/stream_publish.go, gather): each is still confirmed on its own,
// as its own message, and one the engine refuses (a delay past this
// server's --max-delay, which only the engine knows) gets its own error
// frame while the others it was gathered with are stored.
func TestStreamPlainPublishesGathered(t *testing.T) {
	s := startServer(t, t.TempDir(), "--max-delay", "1h")
	createTopic(t, s, "gath", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub, err := (&stream.Client{BaseURL: s.base}).PublishStream(ctx, "gath", stream.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	const n, bad = 600, 300
	confirms := make([]*stream.Confirm, n)
	for i := range confirms {
		m := apiclient.PublishRequest{Body: sptr(fmt.Sprint("g-", i))}
		if i == bad {
			m.DelaySeconds = sptr(2 * 3600)
		}
		if confirms[i], err = pub.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]int{}
	for i, c := range confirms {
		rs, err := c.Wait(ctx)
		if i == bad {
			var pe *stream.ProblemError
			if !errors.As(err, &pe) || pe.Problem.Status != 400 {
				t.Fatalf("the publish past --max-delay: %+v %v, want a 400 error frame", rs, err)
			}
			continue
		}
		if err != nil || len(rs) != 1 || rs[0].MessageId == "" {
			t.Fatalf("confirm %d: %+v %v", i, rs, err)
		}
		if j, dup := ids[rs[0].MessageId]; dup {
			t.Fatalf("publishes %d and %d confirmed as one message %s", j, i, rs[0].MessageId)
		}
		ids[rs[0].MessageId] = i
	}
	// Every confirmed one is stored under its id, with its own body.
	for id, i := range ids {
		var m struct {
			Body string `json:"body"`
		}
		resp := s.do(t, "GET", "/v1/topics/gath/messages/"+id, nil)
		want(t, resp, 200)
		resp.JSON(t, &m)
		if m.Body != fmt.Sprint("g-", i) {
			t.Fatalf("message %s (publish %d) has body %q", id, i, m.Body)
		}
	}
}
