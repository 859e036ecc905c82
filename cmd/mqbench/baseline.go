package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
)

// The baseline server is the bare-HTTP ceiling the gateway is compared
// with: the same routes, request decoding and answer shapes as API.md's
// publishing calls, served by plain net/http, storing nothing. What the
// gateway costs beyond it is routing, validation, logging and the store.

func baselineMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("baseline-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address (port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := startBaseline(*addr)
	if err != nil {
		return err
	}
	// compare reads this first line to learn the address.
	fmt.Fprintf(stdout, "%s%s\n", baselineReadyPrefix, b.URL())
	<-ctx.Done()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.Close(shutCtx)
}

const baselineReadyPrefix = "mqbench baseline-server listening on "

// baselineServer is a running baseline. Close stops it and waits for its
// serve goroutine.
type baselineServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan error

	seq atomic.Int64 // publishes answered, for queue positions
}

// startBaseline listens first, then serves in a goroutine, so a bind error
// comes back here.
func startBaseline(addr string) (*baselineServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &baselineServer{ln: ln, done: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/topics/{topic}", b.handleTopicPut)
	mux.HandleFunc("POST /v1/topics/{topic}/messages", b.handlePublish)
	mux.HandleFunc("POST /v1/topics/{topic}/messages/batch", b.handlePublishBatch)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	// The same protections a production server has, so the comparison
	// is with a server one would deploy, not a naked one.
	b.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	go func() { b.done <- b.srv.Serve(ln) }()
	return b, nil
}

func (b *baselineServer) URL() string { return "http://" + b.ln.Addr().String() }

func (b *baselineServer) Close(ctx context.Context) error {
	err := b.srv.Shutdown(ctx)
	if serr := <-b.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// baselineQueues is the queue count the baseline pretends every topic has.
const baselineQueues = 8

type baselineTopic struct {
	Name           string    `json:"name"`
	Queues         int       `json:"queues"`
	RetentionHours int       `json:"retentionHours"`
	CreatedAt      time.Time `json:"createdAt"`
}

type baselinePublishResult struct {
	MessageID   string `json:"messageId"`
	Topic       string `json:"topic"`
	QueueID     int    `json:"queueId"`
	QueueOffset int64  `json:"queueOffset"`
}

func (b *baselineServer) handleTopicPut(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Queues         int `json:"queues"`
		RetentionHours int `json:"retentionHours"`
	}
	if !decodeStrict(w, r, 64<<10, &in) {
		return
	}
	t := baselineTopic{Name: r.PathValue("topic"), Queues: cmp0(in.Queues, baselineQueues),
		RetentionHours: cmp0(in.RetentionHours, 72), CreatedAt: time.Now().UTC()}
	answer(w, http.StatusCreated, t)
}

func (b *baselineServer) handlePublish(w http.ResponseWriter, r *http.Request) {
	var m baselineMessage
	if !decodeStrict(w, r, core.MaxMessageSize+64<<10, &m) {
		return
	}
	if msg := m.check(); msg != "" {
		problem(w, http.StatusBadRequest, msg)
		return
	}
	answer(w, http.StatusCreated, b.place(r.PathValue("topic")))
}

func (b *baselineServer) handlePublishBatch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Messages []baselineMessage `json:"messages"`
	}
	if !decodeStrict(w, r, core.MaxMessageSize+64<<10, &in) {
		return
	}
	if len(in.Messages) < 1 || len(in.Messages) > core.MaxBatch {
		problem(w, http.StatusBadRequest, "messages: 1.."+strconv.Itoa(core.MaxBatch))
		return
	}
	for i := range in.Messages {
		if msg := in.Messages[i].check(); msg != "" {
			problem(w, http.StatusBadRequest, msg)
			return
		}
	}
	topic := r.PathValue("topic")
	out := struct {
		Results []baselinePublishResult `json:"results"`
	}{Results: make([]baselinePublishResult, len(in.Messages))}
	for i := range out.Results {
		out.Results[i] = b.place(topic)
	}
	answer(w, http.StatusCreated, out)
}

// place invents a position: round-robin over the queues, no storage.
func (b *baselineServer) place(topic string) baselinePublishResult {
	n := b.seq.Add(1) - 1
	return baselinePublishResult{MessageID: newMessageID(), Topic: topic,
		QueueID: int(n % baselineQueues), QueueOffset: n / baselineQueues}
}

// baselineMessage mirrors API.md's publish body so that decoding costs
// what the gateway's does.
type baselineMessage struct {
	Body         *string           `json:"body"`
	BodyBase64   *string           `json:"bodyBase64"`
	Tags         string            `json:"tags"`
	Keys         []string          `json:"keys"`
	Properties   map[string]string `json:"properties"`
	ShardingKey  string            `json:"shardingKey"`
	DelayLevel   int               `json:"delayLevel"`
	DelaySeconds int               `json:"delaySeconds"`
	DeliverAt    *time.Time        `json:"deliverAt"`
}

// check enforces body / bodyBase64 exactly one and decodes the base64, as
// the gateway must.
func (m *baselineMessage) check() string {
	if (m.Body == nil) == (m.BodyBase64 == nil) {
		return "exactly one of body and bodyBase64"
	}
	if m.BodyBase64 != nil {
		if _, err := base64.StdEncoding.DecodeString(*m.BodyBase64); err != nil {
			return "bodyBase64: not base64"
		}
	}
	return ""
}

func decodeStrict(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			problem(w, http.StatusRequestEntityTooLarge, "body too large")
		} else {
			problem(w, http.StatusBadRequest, err.Error())
		}
		return false
	}
	return true
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", newMessageID())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"title": http.StatusText(status), "status": status, "detail": detail})
}

// newMessageID is 16 random bytes in hex, the size of a RocketMQ
// msgId's information (not its layout).
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
