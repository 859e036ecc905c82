package cli

import (
	"io"
	"strings"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

const pubUsage = "pub TOPIC [BODY] [--tags T] [--keys K,...] [--sharding-key S] [--property k=v]... [--delay-level N | --delay-seconds N | --deliver-at T] [--idempotency-key K] [--binary] [--batch N] [--run-id R | --no-dedup] [--quiet]"

// runPub publishes BODY, or each line of stdin over the topic's publish
// stream (pubStream), or all of stdin as one binary message (--binary).
func runPub(e *env, args []string) error {
	fs := e.flags(pubUsage)
	tags := fs.String("tags", "", "the message's tag")
	var keys, props listFlag
	fs.Var(&keys, "keys", "message keys (comma-separated; repeatable) for lookups by key")
	shard := fs.String("sharding-key", "", "sharding key: messages with one key go to one queue, in order")
	fs.Var(&props, "property", "user property name=value; repeatable")
	level := fs.Int("delay-level", 0, "delay by this level (1..18 by default)")
	delay := fs.Int("delay-seconds", 0, "delay by this many seconds")
	at := fs.String("deliver-at", "", "deliver at this time (RFC 3339)")
	idem := fs.String("idempotency-key", "", "Idempotency-Key of a single publish: a retry with the same key stores nothing new")
	binary := fs.Bool("binary", false, "publish all of stdin as one message of bytes (bodyBase64)")
	batch := fs.Int("batch", 1, "stdin lines per publish frame (1..1000): an atomic batch, confirmed as a whole")
	runID := fs.String("run-id", "", "stdin: the run id of the lines' deduplicationIds (<run id>-<line number>); give an earlier run's to re-run it safely (default: a new one, printed)")
	noDedup := fs.Bool("no-dedup", false, "stdin: no deduplicationIds, a re-run stores every line again")
	quiet := fs.Bool("quiet", false, "stdin: print only the summary, no row per message")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(pos, 1, 2, "mqgate "+pubUsage); err != nil {
		return err
	}
	if *batch < 1 || *batch > 1000 {
		return usageError("--batch must be between 1 and 1000")
	}
	topic := pos[0]
	tmpl := apiclient.PublishRequest{}
	if *tags != "" {
		tmpl.Tags = tags
	}
	var ks []string
	for _, k := range keys {
		for _, s := range strings.Split(k, ",") {
			if s = strings.TrimSpace(s); s != "" {
				ks = append(ks, s)
			}
		}
	}
	if len(ks) > 0 {
		tmpl.Keys = &ks
	}
	if *shard != "" {
		tmpl.ShardingKey = shard
	}
	if len(props) > 0 {
		m := map[string]string{}
		for _, p := range props {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return usageError("--property %q: want name=value", p)
			}
			m[k] = v
		}
		tmpl.Properties = &m
	}
	if *level > 0 {
		tmpl.DelayLevel = level
	}
	if *delay > 0 {
		tmpl.DelaySeconds = delay
	}
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return usageError("--deliver-at %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z", *at)
		}
		tmpl.DeliverAt = &t
	}

	switch {
	case len(pos) == 2 || *binary:
		m := tmpl
		if *binary {
			if len(pos) == 2 {
				return usageError("--binary reads the body from stdin; give no BODY")
			}
			b, err := io.ReadAll(e.stdin)
			if err != nil {
				return err
			}
			m.BodyBase64 = &b
		} else {
			m.Body = ptr(pos[1])
		}
		var params *apiclient.PublishMessageParams
		if *idem != "" {
			params = &apiclient.PublishMessageParams{IdempotencyKey: idem}
		}
		ctx, cancel := e.reqCtx(0)
		defer cancel()
		r, err := e.client.PublishMessageWithResponse(ctx, topic, params, m)
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			return e.publishTable([]apiclient.PublishResult{*r.JSON201})
		})
	case *idem != "":
		return usageError("--idempotency-key applies to a single BODY, not to stdin lines")
	}

	if *noDedup && *runID != "" {
		return usageError("--run-id and --no-dedup exclude each other")
	}
	return e.pubStream(pubOptions{topic: topic, tmpl: tmpl, batch: *batch, runID: *runID, dedup: !*noDedup, quiet: *quiet})
}

func (e *env) publishTable(rs []apiclient.PublishResult) error {
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		replayed := ""
		if r.Replayed != nil && *r.Replayed {
			replayed = "yes"
		}
		rows = append(rows, []string{str(r.MessageId), num(r.QueueId), num(r.QueueOffset), when(r.DeliverAt), replayed})
	}
	return e.table([]string{"MESSAGE_ID", "QUEUE", "OFFSET", "DELIVER_AT", "REPLAYED"}, rows)
}
