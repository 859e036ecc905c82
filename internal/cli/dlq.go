package cli

import (
	"fmt"
	"strings"

	"github.com/mqgate/mqgate/apiclient"
)

const dlqUsage = "dlq GROUP [--limit N] [--cursor C]"

// runDLQ lists a group's dead letters, one page.
func runDLQ(e *env, args []string) error {
	fs := e.flags(dlqUsage)
	limit := fs.Int("limit", 0, "at most this many (server default 100)")
	cursor := fs.String("cursor", "", "continue from a previous page's nextCursor")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, 1, "mqgate "+dlqUsage); err != nil {
		return err
	}
	params := &apiclient.ListDeadLettersParams{}
	if *limit > 0 {
		params.Limit = limit
	}
	if *cursor != "" {
		params.Cursor = cursor
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.ListDeadLettersWithResponse(ctx, pos[0], params)
	if err := check(r, err); err != nil {
		return err
	}
	return e.show(r.Body, func() error {
		var rows [][]string
		if r.JSON200 != nil && r.JSON200.Messages != nil {
			for _, m := range r.JSON200.Messages {
				body := str(m.Body)
				if m.BodyBase64 != nil {
					body = fmt.Sprintf("(%d bytes)", len(*m.BodyBase64))
				}
				if len(body) > 40 {
					body = body[:40] + "…"
				}
				rows = append(rows, []string{str(m.MessageId), str(m.Topic), num(m.ReconsumeTimes), when(m.StoredAt), strings.ReplaceAll(body, "\n", " ")})
			}
		}
		if err := e.table([]string{"MESSAGE_ID", "TOPIC", "RECONSUME_TIMES", "STORED", "BODY"}, rows); err != nil {
			return err
		}
		if r.JSON200 != nil && r.JSON200.NextCursor != nil && *r.JSON200.NextCursor != "" {
			fmt.Fprintf(e.stdout, "\nmore: --cursor %s\n", *r.JSON200.NextCursor)
		}
		return nil
	})
}

const redriveUsage = "redrive GROUP [MESSAGE_ID...] (no id: every dead letter)"

// runRedrive sends dead letters back to the group.
func runRedrive(e *env, args []string) error {
	fs := e.flags(redriveUsage)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, -1, "mqgate "+redriveUsage); err != nil {
		return err
	}
	req := apiclient.RedriveRequest{}
	if len(pos) > 1 {
		ids := pos[1:]
		req.MessageIds = &ids
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	r, err := e.client.RedriveDeadLettersWithResponse(ctx, pos[0], req)
	if err := check(r, err); err != nil {
		return err
	}
	return e.show(r.Body, func() error {
		n := 0
		if r.JSON200 != nil {
			n = r.JSON200.Redriven
		}
		fmt.Fprintf(e.stdout, "%s redriven to %s\n", plural(n, "dead letter"), pos[0])
		return nil
	})
}
