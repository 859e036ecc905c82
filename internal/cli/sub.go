package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

const subUsage = "sub GROUP [--count N] [--once] [--batch N] [--wait S] [--invisible-seconds S] [--consumer-id C] [--no-ack] [--rest]"

// runSub streams a group's messages to stdout (nsq_tail, gcloud pubsub
// subscriptions pull --auto-ack): one line per message, its body (-o json:
// the message as the API gives it, receipt handle included), acknowledged
// once written and flushed. It consumes over the group's stream
// (subStream) unless --once or --rest ask for receive calls. Over REST,
// SIGINT (ctx) stops it between batches: the
// batch in hand is written and acked, a receive in progress is abandoned
// (anything it had leased comes back after its lease), and it exits 0.
// Nothing is acked twice or acked after being nacked.
func runSub(e *env, args []string) error {
	fs := e.flags(subUsage)
	count := fs.Int("count", 0, "exit after this many messages (0: until SIGINT)")
	batch := fs.Int("batch", 10, "messages in hand at once (1..32): the stream's maxOutstandingMessages, or per receive with --once/--rest")
	wait := fs.Int("wait", 20, "long-poll seconds per receive (0..30)")
	invis := fs.Int("invisible-seconds", 0, "lease of each message (default: the group's)")
	consumer := fs.String("consumer-id", "", "consumer id (required for BROADCASTING groups)")
	once := fs.Bool("once", false, "one receive (waiting up to --wait), then exit: for scripts (gcloud pubsub pull)")
	rest := fs.Bool("rest", false, "long-poll receive calls instead of the group's stream")
	noAck := fs.Bool("no-ack", false, "do not acknowledge: messages come back after their lease (use -o json for their receipt handles)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, 1, "mqgate "+subUsage); err != nil {
		return err
	}
	if *batch < 1 || *batch > 32 {
		return usageError("--batch must be between 1 and 32")
	}
	if *wait < 0 || *wait > 30 {
		return usageError("--wait must be between 0 and 30")
	}
	group := pos[0]
	if !*once && !*rest {
		return e.subStream(subOptions{group: group, count: *count, outstanding: *batch,
			invisible: *invis, consumer: *consumer, noAck: *noAck})
	}
	out := bufio.NewWriter(e.stdout)
	got := 0
	for *count == 0 || got < *count {
		if e.ctx.Err() != nil {
			return nil
		}
		n := *batch
		if *count > 0 {
			n = min(n, *count-got)
		}
		req := apiclient.ReceiveRequest{MaxMessages: ptr(n), WaitSeconds: wait}
		if *invis > 0 {
			req.InvisibleSeconds = invis
		}
		if *consumer != "" {
			req.ConsumerId = consumer
		}
		ctx, cancel := e.reqCtx(time.Duration(*wait) * time.Second)
		r, err := e.client.ReceiveMessagesWithResponse(ctx, group, req)
		cancel()
		if e.ctx.Err() != nil {
			return nil // interrupted while waiting
		}
		if err := check(r, err); err != nil {
			return err
		}
		var raw struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			return fmt.Errorf("decoding receive answer: %w", err)
		}
		if r.JSON200 == nil || r.JSON200.Messages == nil || len(r.JSON200.Messages) == 0 {
			if *once {
				return nil
			}
			continue
		}
		msgs := r.JSON200.Messages
		var handles []string
		var werr error
		for i, m := range msgs {
			if e.output == "json" {
				_, werr = fmt.Fprintf(out, "%s\n", raw.Messages[i])
			} else {
				werr = writeBody(out, m)
			}
			if werr == nil {
				werr = out.Flush()
			}
			if werr != nil {
				break
			}
			handles = append(handles, str(m.ReceiptHandle))
		}
		got += len(handles)
		if !*noAck && len(handles) > 0 {
			// Not under e.ctx: an interrupt must not lose the acks of
			// messages already written.
			ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
			r, err := e.client.AckMessagesWithResponse(ctx, group, apiclient.AckRequest{ReceiptHandles: handles})
			cancel()
			if err := check(r, err); err != nil {
				return fmt.Errorf("ack: %w", err)
			}
		}
		if werr != nil {
			if !*noAck && len(handles) < len(msgs) {
				// Written nowhere: hand them back now rather than after the lease.
				var rest []string
				for _, m := range msgs[len(handles):] {
					rest = append(rest, str(m.ReceiptHandle))
				}
				ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
				_, _ = e.client.NackMessagesWithResponse(ctx, group, apiclient.NackRequest{ReceiptHandles: rest})
				cancel()
			}
			return fmt.Errorf("writing to stdout: %w", werr)
		}
		if *once {
			return nil
		}
	}
	return nil
}

// writeBody writes a message's body and a newline: text as is, bytes as
// they are (bodyBase64 decoded).
func writeBody(w *bufio.Writer, m apiclient.ReceivedMessage) error {
	switch {
	case m.Body != nil:
		w.WriteString(*m.Body)
	case m.BodyBase64 != nil:
		w.Write(*m.BodyBase64)
	}
	return w.WriteByte('\n')
}

const ackUsage = "ack GROUP HANDLE... (or - to read handles from stdin, one a line)"

func runAck(e *env, args []string) error {
	fs := e.flags(ackUsage)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	group, handles, err := e.handles(pos, "mqgate "+ackUsage)
	if err != nil {
		return err
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.AckMessagesWithResponse(ctx, group, apiclient.AckRequest{ReceiptHandles: handles})
	if err := check(r, err); err != nil {
		return err
	}
	return e.handleResults(r.Body, r.JSON200)
}

const nackUsage = "nack GROUP HANDLE... [--delay-level N] (N: 0 = the engine's ladder, -1 = dead-letter now, 1..18)"

func runNack(e *env, args []string) error {
	fs := e.flags(nackUsage)
	level := fs.Int("delay-level", 0, "retry delay level: 0 = the engine decides, -1 = dead-letter now, 1..18 = that level")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	group, handles, err := e.handles(pos, "mqgate "+nackUsage)
	if err != nil {
		return err
	}
	req := apiclient.NackRequest{ReceiptHandles: handles}
	if *level != 0 {
		req.DelayLevel = level
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.NackMessagesWithResponse(ctx, group, req)
	if err := check(r, err); err != nil {
		return err
	}
	return e.handleResults(r.Body, r.JSON200)
}

// handles reads GROUP and the receipt handles (arguments, or stdin for -).
func (e *env) handles(pos []string, usage string) (string, []string, error) {
	if len(pos) < 2 {
		return "", nil, usageError("usage: %s", usage)
	}
	hs := pos[1:]
	if len(hs) == 1 && hs[0] == "-" {
		hs = nil
		sc := bufio.NewScanner(e.stdin)
		for sc.Scan() {
			if h := strings.TrimSpace(sc.Text()); h != "" {
				hs = append(hs, h)
			}
		}
		if err := sc.Err(); err != nil {
			return "", nil, err
		}
	}
	if len(hs) == 0 || len(hs) > 100 {
		return "", nil, usageError("give 1 to 100 receipt handles")
	}
	return pos[0], hs, nil
}

// handleResults prints ack/nack results; a handle that is not ok (expired
// or invalid) makes the exit code 3.
func (e *env) handleResults(body []byte, res *apiclient.HandleResults) error {
	var bad []string
	var rows [][]string
	if res != nil && res.Results != nil {
		for _, h := range res.Results {
			st := string(h.Status)
			if st != "ok" {
				bad = append(bad, st)
			}
			rows = append(rows, []string{short(str(h.ReceiptHandle)), st, when(h.InvisibleUntil)})
		}
	}
	if err := e.show(body, func() error {
		return e.table([]string{"RECEIPT_HANDLE", "STATUS", "INVISIBLE_UNTIL"}, rows)
	}); err != nil {
		return err
	}
	if len(bad) > 0 {
		return &exitError{code: ExitConflict, msg: fmt.Sprintf("%d of %d handles not ok (%s)", len(bad), len(rows), strings.Join(bad, ", "))}
	}
	return nil
}

// short abbreviates a long receipt handle for a table.
func short(h string) string {
	if len(h) <= 24 {
		return h
	}
	return h[:10] + "…" + h[len(h)-10:]
}
