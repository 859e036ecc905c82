package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"
)

// A publish whose batch no stream receives ("no responders": no leader
// subscribed, as while a stream elects one after a partition heals —
// e2e/TestJetStreamFaults saw hundreds of 503s there) reached no stream,
// so the gateway sends it again for a moment instead of answering 503.
// The topic's stream is stood in for by deleting it and creating it
// again 300 ms later: the publish sent in between answers 201 (503
// before), and its message is stored.
func TestPublishWhileNoStreamAnswers(t *testing.T) {
	e := newEnv(t)
	e.topic("nolead", 1)
	e.publish(e.gws[0].URL(), "nolead", map[string]any{"body": "first"}) // gw0 knows the topic
	nc, err := nats.Connect(cluster.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "MQ_nolead")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if err := js.DeleteStream(ctx, "MQ_nolead"); err != nil {
		t.Fatal(err)
	}
	recreated := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := js.CreateStream(ctx, cfg)
		recreated <- err
	}()
	id := e.publish(e.gws[0].URL(), "nolead", map[string]any{"body": "while no stream answers"})
	if err := <-recreated; err != nil {
		t.Fatal(err)
	}
	st, err = js.Stream(ctx, "MQ_nolead")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "mq.nolead.0")
	if err != nil {
		t.Fatalf("message %s not stored: %v", id, err)
	}
	if string(m.Data) != "while no stream answers" {
		t.Fatalf("stored %q", m.Data)
	}
}
