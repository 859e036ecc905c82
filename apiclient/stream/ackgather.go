package stream

import (
	"fmt"
	"net/http"

	json "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/apiclient"
)

// Gathered acks. A worker that acks each message as it finishes it gives
// one ack per message; sent one frame each, every ack cost a frame
// written here, a frame read, decoded and checked by the server, and a
// results frame back, which made the frames, not the acks, the cost of
// a consume stream. So the acks given while the writer is busy go out
// together: the first queues a placeholder, the ones after it join it,
// and when the writer takes its next batch the placeholder becomes one
// ack frame of all their handles (up to maxAckHandles). Nothing waits for
// company: an ack given while the writer is idle goes at once, alone.
// Each caller still gets its own results, one per handle it gave, as
// from a frame of its own (the server answers per handle, in order).
//
// Frames keep their order: any other frame queued after a placeholder
// closes it, and a later ack starts a new one, so an ack never passes a
// nack or an extend that was sent after it.

// maxAckHandles is the most handles of one ack frame (the server's
// limit, as on REST ack).
const maxAckHandles = 100

// ackGather is the ack frame one placeholder stands for.
type ackGather struct {
	handles []string
	waiters []ackWaiter
	est     int // the bytes queued counts for it until it is encoded
}

// ackWaiter is one caller's share of a gathered frame: its n handles
// and who gets their results.
type ackWaiter struct {
	n    int
	done func([]apiclient.HandleResult, error)
}

// sendAck queues an ack of handles into the open gathered frame, or
// opens one; done gets the results of handles alone, exactly once.
func (s *conn) sendAck(handles []string, done func([]apiclient.HandleResult, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.roomLocked(); err != nil {
		return err
	}
	g := s.gathering
	if g == nil || len(g.handles)+len(handles) > maxAckHandles {
		g = &ackGather{}
		s.gathering = g
		s.gathers = append(s.gathers, g)
		s.queue = append(s.queue, nil) // the placeholder the writer fills
	}
	g.handles = append(g.handles, handles...)
	g.waiters = append(g.waiters, ackWaiter{n: len(handles), done: done})
	est := 24 + len(handles)*(len(handles[0])+3) // about its share of the frame
	g.est += est
	s.queued += est
	s.wakeWriter()
	return nil
}

// fillGathered turns the placeholders of a batch the writer took into
// ack frames, in order (gathers are theirs, in queue order), each
// registered under its own id. A placeholder whose stream has ended is
// left empty (writeBatch skips it) and its waiters get the stream's end.
func (s *conn) fillGathered(batch [][]byte, gathers []*ackGather) {
	j := 0
	for i := range batch {
		if batch[i] != nil {
			continue
		}
		g := gathers[j]
		j++
		id := s.newID()
		b := encodeSettleFrame(&settleFrame{Type: "ack", ID: id, ReceiptHandles: g.handles})
		s.mu.Lock()
		if s.pending == nil {
			err := s.err
			s.queued -= g.est
			s.mu.Unlock()
			g.fail(err)
			continue
		}
		s.pending[id] = func(a *frame, err error) { s.answerGathered(g, a, err) }
		s.queued += len(b) - g.est // releaseBatch takes len(b) off
		s.mu.Unlock()
		batch[i] = b
	}
}

// answerGathered splits a gathered frame's answer among its waiters. An
// error frame answering several waiters' acks may be one waiter's fault
// (a malformed handle): each waiter's acks are then sent again in a frame
// of their own, so each gets its own answer.
func (s *conn) answerGathered(g *ackGather, a *frame, err error) {
	rs, err := settleResults(a, err)
	if err == nil && len(rs) != len(g.handles) {
		err = fmt.Errorf("stream: %d results for an ack of %d handles", len(rs), len(g.handles))
	}
	if err != nil {
		if pe, ok := err.(*ProblemError); ok && len(g.waiters) > 1 && pe.Problem.Status >= 400 && pe.Problem.Status < 500 &&
			pe.Problem.Status != http.StatusTooManyRequests {
			// On the reader's goroutine: a send may wait for the writer,
			// which must not wait for the reader.
			go s.resendApart(g)
			return
		}
		g.fail(err)
		return
	}
	off := 0
	for _, w := range g.waiters {
		w.done(rs[off:off+w.n:off+w.n], nil)
		off += w.n
	}
}

// resendApart sends each waiter's acks of a refused gathered frame in
// a frame of its own.
func (s *conn) resendApart(g *ackGather) {
	off := 0
	for _, w := range g.waiters {
		hs := g.handles[off : off+w.n : off+w.n]
		off += w.n
		if err := s.sendSettle(settleFrame{Type: "ack", ReceiptHandles: hs}, w.done); err != nil {
			w.done(nil, err)
		}
	}
}

// fail gives every waiter err.
func (g *ackGather) fail(err error) {
	for _, w := range g.waiters {
		w.done(nil, err)
	}
}

// settleResults decodes a settlement frame's answer.
func settleResults(a *frame, err error) ([]apiclient.HandleResult, error) {
	if err != nil {
		return nil, err
	}
	if a.fastResults {
		return a.handles, nil
	}
	var rs []apiclient.HandleResult
	err = json.Unmarshal(a.Results, &rs)
	return rs, err
}
