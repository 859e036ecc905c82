package quota

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/internal/auth"
)

// Paced admits a stream's next receive of up to want messages by key
// through group: a stream is flow-controlled, so over deliveriesPerSecond
// it waits (until ctx ends) instead of being refused. The receipt's Max is
// what the delivery buckets hold (≥ 1); call Delivered with what the
// receive got. nil, nil: the key has no delivery limit there. Streams are
// not counted in concurrentReceives (the server's --max-streams-per-key
// caps them).
func (q *Quotas) Paced(ctx context.Context, key *auth.Key, group string, want int) (*Receipt, error) {
	kq := q.of(key)
	if kq == nil {
		return nil, nil
	}
	rc := &Receipt{Max: want}
	rc.series = kq.series
	if b := kq.own.deliveries; b != nil {
		rc.charges = append(rc.charges, b)
	}
	if i := kq.limits.GroupEntry(group); i >= 0 && kq.groups[i].deliveries != nil {
		rc.charges = append(rc.charges, kq.groups[i].deliveries)
	}
	if len(rc.charges) == 0 {
		return nil, nil
	}
	now := time.Now()
	avail := float64(want)
	for _, b := range rc.charges {
		avail = min(avail, b.lim.TokensAt(now))
	}
	if avail >= 1 {
		rc.Max = int(avail)
		rc.series.count("stream", outcomeAllowed)
		return rc, nil
	}
	var wait time.Duration
	for _, b := range rc.charges {
		r := b.lim.ReserveN(now, 1)
		rc.res = append(rc.res, r)
		wait = max(wait, r.DelayFrom(now))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		rc.Verdict.Cancel()
		return nil, ctx.Err()
	}
	rc.Max, rc.held = 1, 1
	rc.series.count("stream", outcomeDelayed)
	return rc, nil
}
