package stream_test

import (
	"context"
	"log"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// Publishing with many messages in flight, each confirmed once durable.
func ExampleClient_PublishStream() {
	ctx := context.Background()
	c := &stream.Client{BaseURL: "http://127.0.0.1:8080", Key: "my-key"}
	p, err := c.PublishStream(ctx, "orders", stream.PublishOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	var confirms []*stream.Confirm
	for _, body := range []string{"order 17 created", "order 18 created"} {
		// Publish waits only while the server's unconfirmed limit is reached.
		cf, err := p.Publish(ctx, apiclient.PublishRequest{Body: &body})
		if err != nil {
			log.Fatal(err)
		}
		confirms = append(confirms, cf)
	}
	for _, cf := range confirms {
		rs, err := cf.Wait(ctx) // a *stream.ProblemError for a bad message
		if err != nil {
			log.Fatal(err)
		}
		log.Println("stored", rs[0].MessageId)
	}
}

// Consuming with one ack per message and at most 64 unsettled.
func ExampleClient_Consume() {
	ctx := context.Background()
	c := &stream.Client{BaseURL: "http://127.0.0.1:8080", Key: "my-key"}
	s, err := c.Consume(ctx, "billing", stream.ConsumeOptions{MaxOutstandingMessages: 64})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for {
		m, err := s.Receive(ctx)
		if err != nil {
			log.Fatal(err) // the stream ended: its *stream.ClosedError says why
		}
		if m.Body != nil && *m.Body == "poison" {
			s.NackAsync(stream.NackOptions{DelayLevel: -1, Reason: "poison"}, m.ReceiptHandle)
			continue
		}
		// Async: the next delivery is taken while the ack is answered.
		s.AckAsync(m.ReceiptHandle)
	}
}
