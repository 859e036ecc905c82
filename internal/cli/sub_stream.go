package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// subOptions are sub's flags as the stream loop uses them.
type subOptions struct {
	group       string
	count       int // 0: until interrupted
	outstanding int // maxOutstandingMessages (--batch)
	invisible   int
	consumer    string
	noAck       bool
}

// subStream is sub over a consume stream: deliveries are pushed as they
// come, written and flushed, then acked on the stream. Nothing is
// delivered past --count: the stream's maxOutstandingMessages starts at
// most at N and is lowered to what is left before each ack, so acked plus
// outstanding never exceeds N; the last acks go over REST after the
// stream is closed. On SIGINT (or a failed write) the stream is closed
// first and whatever it had pushed but sub had not written is nacked over
// REST, so it comes back at once rather than after its lease.
func (e *env) subStream(o subOptions) error {
	lim := o.outstanding
	if o.count > 0 {
		lim = min(lim, o.count)
	}
	ctx, cancel := e.reqCtx(0)
	c, err := e.streamClient().Consume(ctx, o.group, stream.ConsumeOptions{ConsumerID: o.consumer,
		InvisibleSeconds: o.invisible, MaxOutstandingMessages: lim})
	cancel()
	if err != nil {
		return streamError(err)
	}
	closed := false
	closeStream := func() {
		if !closed {
			closed = true
			c.Close()
		}
	}
	defer closeStream()

	out := bufio.NewWriter(e.stdout)
	got := 0
	for o.count == 0 || got < o.count {
		m, err := c.Receive(e.ctx)
		if err != nil {
			if e.ctx.Err() != nil {
				closeStream()
				return e.handBack(c)
			}
			return streamError(err)
		}
		// Everything already pushed, up to --count, is one write and one ack.
		batch := []apiclient.ReceivedMessage{m}
		for o.count == 0 || got+len(batch) < o.count {
			m, ok := c.TryReceive()
			if !ok {
				break
			}
			batch = append(batch, m)
		}
		handles, werr := e.writeMessages(out, batch)
		got += len(handles)
		last := o.count > 0 && got >= o.count
		if werr != nil || last || e.ctx.Err() != nil {
			closeStream()
		}
		if !o.noAck && len(handles) > 0 {
			if err := e.ackWritten(c, closed, handles, o.count-got); err != nil {
				return err
			}
		}
		if werr != nil {
			e.nackREST(o.group, unwritten(batch, len(handles)))
			e.handBack(c)
			return fmt.Errorf("writing to stdout: %w", werr)
		}
		if closed {
			return e.handBack(c)
		}
	}
	return nil
}

// ackWritten acks what was written: on the stream while it is open (after
// lowering its limit to left when that is below it), over REST once it
// is closed.
func (e *env) ackWritten(c *stream.Consumer, closed bool, handles []string, left int) error {
	// Not under e.ctx: an interrupt must not lose the acks of messages
	// already written.
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	if closed {
		r, err := e.client.AckMessagesWithResponse(ctx, c.Group(), apiclient.AckRequest{ReceiptHandles: handles})
		if err := check(r, err); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		return nil
	}
	if left > 0 && left < c.Limits().MaxOutstandingMessages {
		if _, err := c.Flow(ctx, stream.Limits{MaxOutstandingMessages: left}); err != nil {
			return fmt.Errorf("flow: %w", streamError(err))
		}
	}
	for len(handles) > 0 {
		n := min(len(handles), 100)
		if _, err := c.Ack(ctx, handles[:n]...); err != nil {
			return fmt.Errorf("ack: %w", streamError(err))
		}
		handles = handles[n:]
	}
	return nil
}

// writeMessages writes each message as a line (its body, or with -o json
// the message) and flushes after each; it returns the handles of those
// written.
func (e *env) writeMessages(out *bufio.Writer, msgs []apiclient.ReceivedMessage) ([]string, error) {
	var handles []string
	for _, m := range msgs {
		var err error
		if e.output == "json" {
			var b []byte
			if b, err = json.Marshal(m); err == nil {
				out.Write(b)
				err = out.WriteByte('\n')
			}
		} else {
			err = writeBody(out, m)
		}
		if err == nil {
			err = out.Flush()
		}
		if err != nil {
			return handles, err
		}
		handles = append(handles, m.ReceiptHandle)
	}
	return handles, nil
}

func unwritten(batch []apiclient.ReceivedMessage, written int) []string {
	var hs []string
	for _, m := range batch[written:] {
		hs = append(hs, m.ReceiptHandle)
	}
	return hs
}

// handBack nacks, over REST, the deliveries a closed stream had pushed
// and sub had not written.
func (e *env) handBack(c *stream.Consumer) error {
	var hs []string
	for {
		m, ok := c.TryReceive()
		if !ok {
			break
		}
		hs = append(hs, m.ReceiptHandle)
	}
	e.nackREST(c.Group(), hs)
	return nil
}

func (e *env) nackREST(group string, hs []string) {
	for len(hs) > 0 {
		n := min(len(hs), 100)
		ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
		_, _ = e.client.NackMessagesWithResponse(ctx, group, apiclient.NackRequest{ReceiptHandles: hs[:n]})
		cancel()
		hs = hs[n:]
	}
}
