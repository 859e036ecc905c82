package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

// The generated client (apiclient, from openapi/openapi.json) against the
// real binary: if the document and the server disagree on a path, a field
// or a status, the typed answers below come back empty and the test fails.

func newAPIClient(t *testing.T, s *server) *apiclient.ClientWithResponses {
	t.Helper()
	c, err := apiclient.NewClientWithResponses(s.base, apiclient.WithHTTPClient(client))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ptr is &v for the generated client's optional fields.
func ptr[T any](v T) *T { return &v }

// wantStatus fails unless the generated client's answer has the status.
func wantStatus(t *testing.T, what string, r *http.Response, body []byte, status int) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.StatusCode, status, body)
	}
}

func TestConsumeGeneratedClientRoundTrip(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := newAPIClient(t, s)
	ctx := context.Background()

	tr, err := c.PutTopicWithResponse(ctx, "orders", apiclient.TopicRequest{Queues: ptr(4)})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "put topic", tr.HTTPResponse, tr.Body, http.StatusCreated)
	if tr.JSON201 == nil || tr.JSON201.Queues != 4 {
		t.Fatalf("put topic answered %s", tr.Body)
	}

	gr, err := c.PutGroupWithResponse(ctx, "billing", apiclient.GroupRequest{
		Subscriptions:    []apiclient.SubscriptionBody{{Topic: "orders", Filter: ptr("created || paid")}},
		ConsumeFrom:      &apiclient.ConsumeFrom{Position: ptr(apiclient.ConsumeFromPositionFIRSTOFFSET)},
		InvisibleSeconds: ptr(30),
	})
	if err != nil {
		t.Fatal(err)
	}
	if gr.StatusCode() == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	wantStatus(t, "put group", gr.HTTPResponse, gr.Body, http.StatusCreated)
	if gr.JSON201 == nil || gr.JSON201.Name != "billing" || gr.JSON201.InvisibleSeconds != 30 {
		t.Fatalf("put group answered %s", gr.Body)
	}

	// A text message, a binary one, and one the filter skips.
	bin := []byte{0, 1, 2, 0xff}
	pubs := []apiclient.PublishRequest{
		{Body: ptr("order 17 created"), Tags: ptr("created"), Keys: &[]string{"order-17"},
			Properties: &map[string]string{"region": "eu"}, ShardingKey: ptr("customer-9")},
		{BodyBase64: &bin, Tags: ptr("paid")},
		{Body: ptr("ignored"), Tags: ptr("shipped")},
	}
	ids := map[string]bool{}
	for i, p := range pubs {
		pr, err := c.PublishMessageWithResponse(ctx, "orders", nil, p)
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, fmt.Sprint("publish ", i), pr.HTTPResponse, pr.Body, http.StatusCreated)
		if pr.JSON201 == nil || pr.JSON201.MessageId == "" || pr.JSON201.Topic != "orders" {
			t.Fatalf("publish %d answered %s", i, pr.Body)
		}
		if i < 2 {
			ids[pr.JSON201.MessageId] = true
		}
	}

	var got []apiclient.ReceivedMessage
	checkFor(t, 10*time.Second, 0, func() error {
		rr, err := c.ReceiveMessagesWithResponse(ctx, "billing", apiclient.ReceiveRequest{MaxMessages: ptr(10), WaitSeconds: ptr(2)})
		if err != nil {
			return err
		}
		if rr.JSON200 == nil {
			return fmt.Errorf("receive: %d %s", rr.StatusCode(), rr.Body)
		}
		got = append(got, rr.JSON200.Messages...)
		if len(got) < 2 {
			return fmt.Errorf("received %d of 2", len(got))
		}
		return nil
	})
	if len(got) != 2 {
		t.Fatalf("received %d messages, want the 2 the filter passes", len(got))
	}
	var handles []string
	for _, m := range got {
		if !ids[m.MessageId] || m.ReceiptHandle == "" || m.InvisibleUntil.IsZero() {
			t.Fatalf("received %+v", m)
		}
		if m.Topic != "orders" || m.ReconsumeTimes != 0 || m.BornAt.IsZero() || m.StoredAt.IsZero() {
			t.Fatalf("message fields: %+v", m)
		}
		if until := time.Until(m.InvisibleUntil); until < 20*time.Second || until > 31*time.Second {
			t.Fatalf("invisibleUntil %v from now, want the group's 30s", until)
		}
		switch *m.Tags {
		case "created":
			if m.Body == nil || *m.Body != "order 17 created" || m.BodyBase64 != nil ||
				m.Keys == nil || (*m.Keys)[0] != "order-17" || (*m.Properties)["region"] != "eu" || *m.ShardingKey != "customer-9" {
				t.Fatalf("text message: %+v", m)
			}
		case "paid":
			if m.Body != nil || m.BodyBase64 == nil || !bytes.Equal(*m.BodyBase64, bin) {
				t.Fatalf("binary message: %+v", m)
			}
		default:
			t.Fatalf("the filter passed tag %q", *m.Tags)
		}
		handles = append(handles, m.ReceiptHandle)
	}

	// The group shows both in flight.
	sr, err := c.GetGroupWithResponse(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if sr.JSON200 == nil || sr.JSON200.Status == nil || sr.JSON200.Status.InFlight != 2 {
		t.Fatalf("group status: %s", sr.Body)
	}

	er, err := c.ExtendLeasesWithResponse(ctx, "billing", apiclient.ExtendRequest{ReceiptHandles: handles[:1], InvisibleSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	if er.JSON200 == nil || len(er.JSON200.Results) == 0 || er.JSON200.Results[0].Status != apiclient.HandleResultStatusOk ||
		er.JSON200.Results[0].InvisibleUntil == nil || time.Until(*er.JSON200.Results[0].InvisibleUntil) < 590*time.Second {
		t.Fatalf("extend: %s", er.Body)
	}

	for range 2 { // acking twice answers ok twice
		ar, err := c.AckMessagesWithResponse(ctx, "billing", apiclient.AckRequest{ReceiptHandles: handles})
		if err != nil {
			t.Fatal(err)
		}
		if ar.JSON200 == nil || len(ar.JSON200.Results) != 2 {
			t.Fatalf("ack: %d %s", ar.StatusCode(), ar.Body)
		}
		for i, res := range ar.JSON200.Results {
			if res.Status != apiclient.HandleResultStatusOk || res.ReceiptHandle != handles[i] {
				t.Fatalf("ack: %s", ar.Body)
			}
		}
	}

	// Offsets: everything of orders consumed (the filtered message too),
	// nothing in flight.
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		or, err := c.GetGroupOffsetsWithResponse(ctx, "billing", nil)
		if err != nil {
			return err
		}
		if or.JSON200 == nil {
			return fmt.Errorf("offsets: %d %s", or.StatusCode(), or.Body)
		}
		var max int
		for _, o := range or.JSON200.Offsets {
			if o.Topic != "orders" {
				continue
			}
			max += o.MaxOffset
			if o.Lag != 0 || o.InFlight != 0 || o.CommittedOffset != o.MaxOffset {
				return fmt.Errorf("offsets: %s", or.Body)
			}
		}
		if max != 3 {
			return fmt.Errorf("offsets count %d messages in orders, want 3: %s", max, or.Body)
		}
		return nil
	})

	// Errors decode as problem+json through the typed client too.
	rr, err := c.ReceiveMessagesWithResponse(ctx, "nope", apiclient.ReceiveRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rr.ApplicationproblemJSON404 == nil || rr.ApplicationproblemJSON404.Status != 404 {
		t.Fatalf("unknown group: %d %s", rr.StatusCode(), rr.Body)
	}
	rr, err = c.ReceiveMessagesWithResponse(ctx, "billing", apiclient.ReceiveRequest{MaxMessages: ptr(33), WaitSeconds: ptr(31)})
	if err != nil {
		t.Fatal(err)
	}
	if p := rr.ApplicationproblemJSON400; p == nil || p.Errors == nil || len(*p.Errors) != 2 {
		t.Fatalf("invalid receive: %d %s", rr.StatusCode(), rr.Body)
	}

	dr, err := c.DeleteGroupWithResponse(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "delete group", dr.HTTPResponse, dr.Body, http.StatusNoContent)
}
