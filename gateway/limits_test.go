package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/limitstest"
)

// TestRequestLimitsAreCores: the embedded gateway refuses the shared
// suite's bad receives and settles with exactly core's Errors (as
// JetStream does: backend/jetstream TestRequestLimitsAreCores), and takes
// the receives at each limit.
func TestRequestLimitsAreCores(t *testing.T) {
	e := newRealEnv(t)
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "limits", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	cfg := clustering("limits-g")
	cfg.Subscriptions = []core.Subscription{{Topic: "limits", Filter: "*"}}
	if _, _, err := e.reg.Put(cfg); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	limitstest.CheckReceives(t, func(req core.ReceiveRequest) error {
		_, err := e.gw.Receive(ctx, "limits-g", req)
		return err
	})
	limitstest.CheckSettles(t, settler{ctx, e.gw, "limits-g"})
}

// settler is Embedded's settle side as limitstest sees it.
type settler struct {
	ctx   context.Context
	e     *Embedded
	group string
}

func (s settler) Ack(h []string) error {
	_, err := s.e.Ack(s.ctx, s.group, h)
	return err
}

func (s settler) NackReason(h []string, level int, reason string) error {
	_, err := s.e.Nack(s.ctx, s.group, h, level, reason)
	return err
}

func (s settler) Extend(h []string, d time.Duration) error {
	_, err := s.e.Extend(s.ctx, s.group, h, d)
	return err
}
