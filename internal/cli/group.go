package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

const groupUsage = "group list | group get GROUP | group create GROUP --subscribe TOPIC[=FILTER]... [flags] | group delete GROUP"

// runGroup: mqgate group list|get|create|delete.
func runGroup(e *env, args []string) error {
	fs := e.flags(groupUsage)
	var subs listFlag
	fs.Var(&subs, "subscribe", "create: TOPIC or TOPIC=FILTER (tag filter, default *); repeatable")
	fs.Var(&subs, "topic", "same as --subscribe")
	from := fs.String("from", "", "create: where a new group starts: FIRST_OFFSET, LAST_OFFSET (server default) or TIMESTAMP")
	ts := fs.String("timestamp", "", "create: with --from TIMESTAMP, the time (RFC 3339)")
	model := fs.String("model", "", "create: CLUSTERING (default) or BROADCASTING")
	mode := fs.String("mode", "", "create: CONCURRENTLY (default) or ORDERLY")
	maxRe := fs.Int("max-reconsume", -1, "create: retries before dead-lettering (server default 16)")
	invis := fs.Int("invisible-seconds", 0, "create: default lease of a received message")
	pushURL := fs.String("push-url", "", "create: make it a webhook group pushing to this URL")
	pushSecret := fs.String("push-secret", "", "create: webhook signing secret (whsec_ + base64 of >= 24 bytes)")
	pushInFlight := fs.Int("push-max-in-flight", 0, "create: concurrent webhook requests")
	pushTimeout := fs.Int("push-timeout", 0, "create: seconds one webhook request may take")
	pushBatch := fs.Int("push-batch-size", 0, "create: messages per webhook request")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("usage: mqgate %s", groupUsage)
	}
	ctx, cancel := e.reqCtx(0)
	defer cancel()
	switch verb := pos[0]; verb {
	case "list", "ls":
		if err := want(pos, 1, 1, "mqgate group list"); err != nil {
			return err
		}
		r, err := e.client.ListGroupsWithResponse(ctx, nil)
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			var rows [][]string
			if r.JSON200 != nil && r.JSON200.Groups != nil {
				for _, g := range r.JSON200.Groups {
					rows = append(rows, groupRow(g))
				}
			}
			return e.table([]string{"GROUP", "SUBSCRIPTIONS", "MODEL", "MODE", "PUSH"}, rows)
		})
	case "get", "describe":
		if err := want(pos, 2, 2, "mqgate group get GROUP"); err != nil {
			return err
		}
		r, err := e.client.GetGroupWithResponse(ctx, pos[1])
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			g := r.JSON200
			if err := e.table([]string{"GROUP", "SUBSCRIPTIONS", "MODEL", "MODE", "PUSH"}, [][]string{groupRow(*g)}); err != nil {
				return err
			}
			if st := g.Status; st != nil {
				fmt.Fprintln(e.stdout)
				return e.table([]string{"QUEUES_OWNED", "IN_FLIGHT", "BUFFERED", "WAITING", "RETRY_DEPTH", "DLQ_DEPTH"},
					[][]string{{num(st.QueuesOwned), num(st.InFlight), num(st.Buffered), num(st.Waiting), num(st.RetryDepth), num(st.DlqDepth)}})
			}
			return nil
		})
	case "create", "update":
		if err := want(pos, 2, 2, "mqgate group create GROUP --subscribe TOPIC[=FILTER]..."); err != nil {
			return err
		}
		if len(subs) == 0 {
			return usageError("group create needs at least one --subscribe TOPIC[=FILTER]")
		}
		req := apiclient.GroupRequest{}
		for _, s := range subs {
			topic, filter, has := strings.Cut(s, "=")
			sb := apiclient.SubscriptionBody{Topic: topic}
			if has {
				sb.Filter = ptr(filter)
			}
			req.Subscriptions = append(req.Subscriptions, sb)
		}
		if *from != "" || *ts != "" {
			cf := &apiclient.ConsumeFrom{}
			if *from != "" {
				cf.Position = ptr(apiclient.ConsumeFromPosition(strings.ToUpper(*from)))
			}
			if *ts != "" {
				t, err := time.Parse(time.RFC3339, *ts)
				if err != nil {
					return usageError("--timestamp %q: want RFC 3339, e.g. 2026-01-02T15:04:05Z", *ts)
				}
				cf.Timestamp = &t
			}
			req.ConsumeFrom = cf
		}
		if *model != "" {
			req.MessageModel = ptr(apiclient.GroupRequestMessageModel(strings.ToUpper(*model)))
		}
		if *mode != "" {
			req.ConsumeMode = ptr(apiclient.GroupRequestConsumeMode(strings.ToUpper(*mode)))
		}
		if *maxRe >= 0 {
			req.MaxReconsumeTimes = maxRe
		}
		if *invis > 0 {
			req.InvisibleSeconds = invis
		}
		if *pushURL != "" {
			pb := &apiclient.PushBody{Url: *pushURL}
			if *pushSecret != "" {
				pb.Secret = pushSecret
			}
			if *pushInFlight > 0 {
				pb.MaxInFlight = pushInFlight
			}
			if *pushTimeout > 0 {
				pb.TimeoutSeconds = pushTimeout
			}
			if *pushBatch > 0 {
				pb.BatchSize = pushBatch
			}
			req.Push = pb
		}
		// The group as it was, to say whether the PUT changed it (a PUT
		// answers 200 whether it did or not).
		before, err := e.client.GetGroupWithResponse(ctx, pos[1])
		if err != nil {
			return check(nil, err)
		}
		if err := check(before, nil); err != nil && before.StatusCode() != 404 {
			return err
		}
		r, err := e.client.PutGroupWithResponse(ctx, pos[1], req)
		if err := check(r, err); err != nil {
			return err
		}
		return e.show(r.Body, func() error {
			what := "created"
			if r.StatusCode() == 200 {
				what = "updated"
				// A new push secret cannot be compared (it is never shown).
				if before.JSON200 != nil && r.JSON200 != nil && *pushSecret == "" &&
					groupConfig(*before.JSON200) == groupConfig(*r.JSON200) {
					what = "unchanged"
				}
			}
			fmt.Fprintf(e.stdout, "group %s %s\n", pos[1], what)
			return nil
		})
	case "delete", "rm":
		if err := want(pos, 2, 2, "mqgate group delete GROUP"); err != nil {
			return err
		}
		r, err := e.client.DeleteGroupWithResponse(ctx, pos[1])
		if err := check(r, err); err != nil {
			return err
		}
		if e.output == "json" {
			return e.printJSON([]byte(fmt.Sprintf(`{"deleted": %q}`, pos[1])))
		}
		fmt.Fprintf(e.stdout, "group %s deleted\n", pos[1])
		return nil
	default:
		return usageError("unknown group verb %q; usage: mqgate %s", verb, groupUsage)
	}
}

func groupRow(g apiclient.Group) []string {
	var subs []string
	if g.Subscriptions != nil {
		for _, s := range g.Subscriptions {
			f := str(s.Filter)
			if f == "" || f == "*" {
				subs = append(subs, s.Topic)
			} else {
				subs = append(subs, s.Topic+"="+f)
			}
		}
	}
	push := ""
	if g.Push != nil {
		push = str(g.Push.Url)
	}
	return []string{str(g.Name), strings.Join(subs, ","), str(g.MessageModel), str(g.ConsumeMode), push}
}

// groupConfig is what a PUT sets of a group, comparable: not its name,
// times, pause state or live status.
func groupConfig(g apiclient.Group) string {
	b, _ := json.Marshal(struct {
		Subscriptions           []apiclient.SubscriptionBody
		Model, Mode             string
		From                    apiclient.ConsumeFromView
		MaxReconsume, Invisible int
		Push                    *apiclient.PushView
	}{g.Subscriptions, string(g.MessageModel), string(g.ConsumeMode), g.ConsumeFrom, g.MaxReconsumeTimes, g.InvisibleSeconds, g.Push})
	return string(b)
}
