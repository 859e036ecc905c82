package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// ExitInterrupted is pub's exit code when SIGINT or SIGTERM stopped it
// before stdin ended; the summary on stdout says what was stored.
const ExitInterrupted = 6

// pubOptions are pub's stdin flags.
type pubOptions struct {
	topic string
	tmpl  apiclient.PublishRequest
	batch int
	runID string
	dedup bool
	quiet bool
}

// pubSummary is what a stdin pub stored: printed at the end, also when it
// was interrupted, so a re-run knows where it stands.
type pubSummary struct {
	RunID string `json:"runId,omitempty"`
	// Stored counts the messages confirmed (durable), Replayed those of
	// them an earlier run with the same run id had stored already.
	Stored         int64  `json:"stored"`
	Replayed       int64  `json:"replayed"`
	FirstMessageID string `json:"firstMessageId,omitempty"`
	LastMessageID  string `json:"lastMessageId,omitempty"`
	// LastLine is the stdin line number up to which every non-empty line
	// is stored (0: none).
	LastLine int `json:"lastLine"`
	// Unconfirmed counts messages sent whose confirm did not come: they
	// may or may not be stored (a re-run with the run id settles it).
	Unconfirmed int64  `json:"unconfirmed"`
	Interrupted bool   `json:"interrupted"`
	Error       string `json:"error,omitempty"`
}

// pubFrame is one publish frame in flight: its lines and its confirm.
type pubFrame struct {
	lines   []int
	confirm *stream.Confirm
}

type stdinLine struct {
	n    int
	text string
}

// pubStream publishes each non-empty line of stdin over the topic's
// publish stream, --batch lines a frame, each line with the
// deduplicationId <run id>-<line number> unless --no-dedup. Confirms are
// matched to their lines and printed in line order as they come (the
// stream keeps at most the server's limit unconfirmed); the summary comes
// last. SIGINT/SIGTERM stops reading stdin, waits (up to --timeout) for
// the confirms of what was sent, prints the summary and exits 6.
func (e *env) pubStream(o pubOptions) error {
	if o.dedup {
		if o.runID == "" {
			o.runID = newRunID()
		} else if err := checkRunID(o.runID); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "mqgate pub: run id %s (re-run with --run-id %s to store only what is missing)\n", o.runID, o.runID)
	}
	ctx, cancel := e.reqCtx(0)
	p, err := e.streamClient().PublishStream(ctx, o.topic, stream.PublishOptions{})
	cancel()
	if err != nil {
		return streamError(err)
	}
	defer p.Close()

	lines := make(chan stdinLine, 64)
	var readErr error
	go func() {
		// Owned by the process: a read blocked on a terminal cannot be
		// interrupted, so an interrupt leaves it and the command returns.
		defer close(lines)
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for n := 1; sc.Scan(); n++ {
			if sc.Text() != "" {
				lines <- stdinLine{n, sc.Text()}
			}
		}
		readErr = sc.Err()
	}()

	frames := make(chan pubFrame, 10000)
	failed := make(chan struct{}) // closed by the printer at the first failed frame
	var sum pubSummary
	var firstErr error
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		firstErr = e.printConfirms(frames, failed, &sum, o.quiet)
	}()

	var msgs []apiclient.PublishRequest
	var nums []int
	send := func() error {
		if len(msgs) == 0 {
			return nil
		}
		var c *stream.Confirm
		var err error
		if len(msgs) == 1 {
			c, err = p.Publish(e.ctx, msgs[0])
		} else {
			c, err = p.PublishBatch(e.ctx, msgs)
		}
		if err != nil {
			return err
		}
		frames <- pubFrame{lines: nums, confirm: c}
		msgs, nums = nil, nil
		return nil
	}
	var sendErr error
	eof := false
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				eof = true
				sendErr = send()
				break read
			}
			m := o.tmpl
			m.Body = ptr(l.text)
			if o.dedup {
				m.DeduplicationId = ptr(o.runID + "-" + strconv.Itoa(l.n))
			}
			msgs, nums = append(msgs, m), append(nums, l.n)
			if len(msgs) == o.batch {
				if sendErr = send(); sendErr != nil {
					break read
				}
			}
		case <-e.ctx.Done():
			break read
		case <-failed:
			break read
		}
	}
	close(frames)
	// The confirms of what was sent come, or the stream ends; an
	// interrupted run waits for them at most --timeout.
	t := time.NewTimer(e.timeout)
	select {
	case <-printed:
	case <-t.C:
		p.Close()
		<-printed
	}
	t.Stop()
	interrupted := e.ctx.Err() != nil
	sum.RunID, sum.Interrupted = o.runID, interrupted
	switch {
	case firstErr != nil:
		sum.Error = firstErr.Error()
	case sendErr != nil && !interrupted:
		firstErr = sendErr
		sum.Error = sendErr.Error()
	case eof && readErr != nil:
		firstErr = fmt.Errorf("reading stdin: %w", readErr)
		sum.Error = firstErr.Error()
	}
	if err := e.printSummary(sum); err != nil {
		return err
	}
	switch {
	case firstErr != nil:
		if errors.Is(firstErr, stream.ErrNotConfirmed) || errors.As(firstErr, new(*stream.ClosedError)) {
			return streamError(firstErr)
		}
		var pe *stream.ProblemError
		if errors.As(firstErr, &pe) {
			return streamError(firstErr)
		}
		return &exitError{code: ExitServer, msg: firstErr.Error()}
	case interrupted:
		return &exitError{code: ExitInterrupted, msg: fmt.Sprintf("interrupted: %d messages stored, every line up to %d", sum.Stored, sum.LastLine)}
	}
	return nil
}

// printConfirms takes frames in the order they were sent, waits for each
// confirm and prints its rows (unless quiet); it keeps sum and returns
// the first failure, closing failed at it. The frames after a failure
// are still waited for and counted: they may have been stored.
func (e *env) printConfirms(frames <-chan pubFrame, failed chan<- struct{}, sum *pubSummary, quiet bool) error {
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	var first error
	prefix := true // every frame so far confirmed
	header := false
	for f := range frames {
		rs, err := f.confirm.Wait(context.Background())
		if err != nil {
			if errors.Is(err, stream.ErrNotConfirmed) {
				sum.Unconfirmed += int64(len(f.lines))
			}
			if first == nil {
				first = fmt.Errorf("line %d: %w", f.lines[0], err)
				close(failed)
			}
			prefix = false
			continue
		}
		for i, r := range rs {
			sum.Stored++
			if r.Replayed != nil && *r.Replayed {
				sum.Replayed++
			}
			if sum.FirstMessageID == "" {
				sum.FirstMessageID = r.MessageId
			}
			sum.LastMessageID = r.MessageId
			line := 0
			if i < len(f.lines) {
				line = f.lines[i]
			}
			if prefix {
				sum.LastLine = line
			}
			if quiet {
				continue
			}
			if e.output == "json" {
				b, _ := json.Marshal(struct {
					Line int `json:"line"`
					apiclient.PublishResult
				}{line, r})
				out.Write(b)
				out.WriteByte('\n')
				continue
			}
			if !header {
				fmt.Fprintf(out, "%-6s  %-26s  %-5s  %-8s  %s\n", "LINE", "MESSAGE_ID", "QUEUE", "OFFSET", "REPLAYED")
				header = true
			}
			replayed := ""
			if r.Replayed != nil && *r.Replayed {
				replayed = "yes"
			}
			fmt.Fprintf(out, "%-6d  %-26s  %-5s  %-8s  %s\n", line, r.MessageId, num(r.QueueId), num(r.QueueOffset), replayed)
		}
		if len(frames) == 0 {
			out.Flush() // rows as they come, not only when a buffer fills
		}
	}
	return first
}

// printSummary writes the summary: a JSON line {"summary": …} with -o
// json, else a sentence.
func (e *env) printSummary(s pubSummary) error {
	if e.output == "json" {
		b, _ := json.Marshal(struct {
			Summary pubSummary `json:"summary"`
		}{s})
		_, err := fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	msg := fmt.Sprintf("stored %d messages", s.Stored)
	if s.Stored == 1 {
		msg = "stored 1 message"
	}
	if s.Replayed > 0 {
		msg += fmt.Sprintf(" (%d already stored by an earlier run)", s.Replayed)
	}
	if s.Stored > 0 {
		msg += fmt.Sprintf(", first %s, last %s; every line up to %d is stored", s.FirstMessageID, s.LastMessageID, s.LastLine)
	}
	if s.Unconfirmed > 0 {
		msg += fmt.Sprintf("; %d sent without a confirm (maybe stored)", s.Unconfirmed)
	}
	if s.Interrupted {
		msg += "; interrupted"
	}
	if s.RunID != "" {
		msg += "; run id " + s.RunID
	}
	_, err := fmt.Fprintln(e.stdout, msg)
	return err
}

// newRunID is a fresh run id: the date and time and 4 random bytes, so
// ids of runs sort by when they ran and do not collide.
func newRunID() string {
	var b [4]byte
	_, _ = io.ReadFull(rand.Reader, b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// checkRunID keeps <run id>-<line number> within a deduplicationId's
// 1..128 printable ASCII characters.
func checkRunID(id string) error {
	if len(id) > 100 {
		return usageError("--run-id: at most 100 characters")
	}
	for _, c := range id {
		if c <= ' ' || c > '~' {
			return usageError("--run-id %q: printable ASCII without spaces only", id)
		}
	}
	return nil
}
