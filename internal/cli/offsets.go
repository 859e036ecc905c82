package cli

import (
	"strings"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

const offsetsUsage = "offsets GROUP [--consumer-id C]"

// runOffsets shows a group's offsets per queue (mqadmin consumerProgress).
func runOffsets(e *env, args []string) error {
	fs := e.flags(offsetsUsage)
	consumer := fs.String("consumer-id", "", "a BROADCASTING group's consumer")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, 1, "mqgate "+offsetsUsage); err != nil {
		return err
	}
	params := &apiclient.GetGroupOffsetsParams{}
	if *consumer != "" {
		params.ConsumerId = consumer
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.GetGroupOffsetsWithResponse(ctx, pos[0], params)
	if err := check(r, err); err != nil {
		return err
	}
	return e.show(r.Body, func() error { return e.offsetTable(r.JSON200) })
}

func (e *env) offsetTable(l *apiclient.OffsetList) error {
	var rows [][]string
	if l != nil && l.Offsets != nil {
		for _, q := range l.Offsets {
			rows = append(rows, []string{str(q.Topic), num(q.QueueId), num(q.CommittedOffset), num(q.MaxOffset), num(q.Lag), num(q.InFlight)})
		}
	}
	return e.table([]string{"TOPIC", "QUEUE", "COMMITTED", "MAX", "LAG", "IN_FLIGHT"}, rows)
}

const resetUsage = "reset GROUP --topic T --to FIRST_OFFSET|LAST_OFFSET|TIMESTAMP [--timestamp T] [--consumer-id C]"

// runReset moves a group's offsets on one topic (mqadmin resetOffsetByTime).
func runReset(e *env, args []string) error {
	fs := e.flags(resetUsage)
	topic := fs.String("topic", "", "the topic whose queues move")
	to := fs.String("to", "", "FIRST_OFFSET, LAST_OFFSET or TIMESTAMP")
	ts := fs.String("timestamp", "", "with --to TIMESTAMP: the time (RFC 3339)")
	consumer := fs.String("consumer-id", "", "a BROADCASTING group's consumer")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, 1, "mqgate "+resetUsage); err != nil {
		return err
	}
	if *topic == "" || *to == "" {
		return usageError("usage: mqgate %s", resetUsage)
	}
	req := apiclient.OffsetResetRequest{Topic: *topic, Position: apiclient.OffsetResetRequestPosition(strings.ToUpper(*to))}
	if !req.Position.Valid() {
		return usageError("--to %q: want FIRST_OFFSET, LAST_OFFSET or TIMESTAMP", *to)
	}
	if *ts != "" {
		t, err := time.Parse(time.RFC3339, *ts)
		if err != nil {
			return usageError("--timestamp %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z", *ts)
		}
		req.Timestamp = &t
	}
	if *consumer != "" {
		req.ConsumerId = consumer
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.ResetGroupOffsetsWithResponse(ctx, pos[0], req)
	if err := check(r, err); err != nil {
		return err
	}
	return e.show(r.Body, func() error { return e.offsetTable(r.JSON200) })
}
