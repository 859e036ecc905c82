package cli

import (
	"fmt"

	"github.com/mqgate/mqgate/apiclient"
)

const topicUsage = "topic list | topic get TOPIC | topic create TOPIC [--queues N] [--retention-hours H] | topic delete TOPIC"

// runTopic: mqgate topic list|get|create|delete.
func runTopic(e *env, args []string) error {
	fs := e.flags(topicUsage)
	queues := fs.Int("queues", 0, "create: queue count (server default 8; may grow, never shrink)")
	retention := fs.Int("retention-hours", 0, "create: hours messages are kept (server default 72)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("usage: mqgate %s", topicUsage)
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	switch verb := pos[0]; verb {
	case "list", "ls":
		if err := want(pos, 1, 1, "mqgate topic list"); err != nil {
			return err
		}
		r, err := e.client.ListTopicsWithResponse(ctx, nil)
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			var rows [][]string
			if r.JSON200 != nil && r.JSON200.Topics != nil {
				for _, t := range r.JSON200.Topics {
					rows = append(rows, []string{str(t.Name), num(t.Queues), num(t.RetentionHours), when(t.CreatedAt)})
				}
			}
			return e.table([]string{"TOPIC", "QUEUES", "RETENTION_HOURS", "CREATED"}, rows)
		})
	case "get", "describe":
		if err := want(pos, 2, 2, "mqgate topic get TOPIC"); err != nil {
			return err
		}
		r, err := e.client.GetTopicWithResponse(ctx, pos[1])
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			t := r.JSON200
			if err := e.table([]string{"TOPIC", "QUEUES", "RETENTION_HOURS", "MESSAGES", "CREATED"}, [][]string{topicRow(*t)}); err != nil {
				return err
			}
			if t.Stats == nil || t.Stats.Queues == nil {
				return nil
			}
			fmt.Fprintln(e.stdout)
			var rows [][]string
			for _, q := range t.Stats.Queues {
				rows = append(rows, []string{num(q.QueueId), num(q.MinOffset), num(q.MaxOffset)})
			}
			return e.table([]string{"QUEUE", "MIN_OFFSET", "MAX_OFFSET"}, rows)
		})
	case "create", "update":
		if err := want(pos, 2, 2, "mqgate topic create TOPIC [--queues N] [--retention-hours H]"); err != nil {
			return err
		}
		var req apiclient.TopicRequest
		if *queues != 0 {
			req.Queues = queues
		}
		if *retention != 0 {
			req.RetentionHours = retention
		}
		// The topic as it was, to say whether the PUT changed anything (a
		// PUT answers 200 whether it changed the topic or not).
		before, err := e.client.GetTopicWithResponse(ctx, pos[1])
		if err != nil {
			return check(nil, err)
		}
		if err := check(before, nil); err != nil && before.StatusCode() != 404 {
			return err
		}
		r, err := e.client.PutTopicWithResponse(ctx, pos[1], req)
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			t, what := r.JSON201, "created"
			if t == nil {
				t, what = r.JSON200, "unchanged"
				if b := before.JSON200; b == nil || b.Queues != t.Queues || b.RetentionHours != t.RetentionHours {
					what = "updated"
				}
			}
			fmt.Fprintf(e.stdout, "topic %s %s: %s, retention %s\n", t.Name, what,
				plural(t.Queues, "queue"), plural(t.RetentionHours, "hour"))
			return nil
		})
	case "delete", "rm":
		if err := want(pos, 2, 2, "mqgate topic delete TOPIC"); err != nil {
			return err
		}
		r, err := e.client.DeleteTopicWithResponse(ctx, pos[1])
		if err := check(r, err); err != nil {
			return err
		}
		if e.output == "json" {
			return e.printJSON([]byte(fmt.Sprintf(`{"deleted": %q}`, pos[1])))
		}
		fmt.Fprintf(e.stdout, "topic %s deleted\n", pos[1])
		return nil
	default:
		return usageError("unknown topic verb %q; usage: mqgate %s", verb, topicUsage)
	}
}

func topicRow(t apiclient.Topic) []string {
	msgs := ""
	if t.Stats != nil {
		msgs = num(t.Stats.Messages)
	}
	return []string{str(t.Name), num(t.Queues), num(t.RetentionHours), msgs, when(t.CreatedAt)}
}
