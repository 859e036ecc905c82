package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	streamclient "github.com/mqgate/mqgate/apiclient/stream"
)

// TestPublishAheadBoundsAndReturns runs publish streams through a server
// whose read-ahead bound (StreamOptions.PublishAhead) holds 16 frames of
// 1 KiB: 6 streams each with a window of 200 then all wait on it, and
// every publish must still be confirmed (the bound paces, it never
// stalls). After good and refused single publishes, batches,
// deduplicated ones and a stream closed with publishes in flight, the
// whole bound must be free again: a share that was not given back would
// slow every stream of the server for good.
func TestPublishAheadBoundsAndReturns(t *testing.T) {
	const bound = 16 << 10
	s := New(Options{Backend: openEmbedded(t), Streams: StreamOptions{PublishAhead: bound}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/topics/ahead", strings.NewReader(`{"queues":4}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &streamclient.Client{BaseURL: srv.URL}
	body := strings.Repeat("x", 1000)
	const streams, each = 6, 300
	var wg sync.WaitGroup
	errs := make(chan error, streams*each)
	for i := range streams {
		wg.Go(func() {
			p, err := c.PublishStream(ctx, "ahead", streamclient.PublishOptions{MaxUnconfirmedMessages: 200})
			if err != nil {
				errs <- err
				return
			}
			defer p.Close()
			var confirms []*streamclient.Confirm
			for j := range each {
				m := apiclient.PublishRequest{Body: &body}
				switch j % 50 {
				case 7: // refused (delay level 0; the least is 1): a problem frame, the stream goes on
					level := 0
					m.DelayLevel = &level
				case 11:
					id := fmt.Sprintf("s%d-%d", i, j)
					m.DeduplicationId = &id
				}
				var cf *streamclient.Confirm
				if j%50 == 13 {
					cf, err = p.PublishBatch(ctx, []apiclient.PublishRequest{m, m})
				} else {
					cf, err = p.Publish(ctx, m)
				}
				if err != nil {
					errs <- err
					return
				}
				confirms = append(confirms, cf)
			}
			for j, cf := range confirms {
				_, err := cf.Wait(ctx)
				var pe *streamclient.ProblemError
				if j%50 == 7 {
					if !errors.As(err, &pe) {
						errs <- fmt.Errorf("stream %d publish %d: want a problem frame, got %v", i, j, err)
					}
				} else if err != nil {
					errs <- fmt.Errorf("stream %d publish %d: %w", i, j, err)
				}
			}
		})
	}
	// One more stream closes with its publishes in flight.
	p, err := c.PublishStream(ctx, "ahead", streamclient.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := p.Publish(ctx, apiclient.PublishRequest{Body: &body}); err != nil {
			break
		}
	}
	p.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Every client has closed, so every stream ends, and each answers
	// what it read before it is released (finish runs before release).
	// A stream whose reader waits on a share never given back would not
	// end: that fails here rather than at the test binary's timeout.
	ended := make(chan struct{})
	go func() { s.streams.done.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("streams still open 30 s after their clients closed: a reader waits on a read-ahead share never given back")
	}
	if !s.publishAhead.TryAcquire(bound) {
		t.Fatal("the read-ahead bound is not whole again after every stream ended: a publish kept its share")
	}
}
