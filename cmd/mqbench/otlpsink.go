package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// An OTLP/HTTP trace sink, to measure a gateway with tracing on (issue
// 25): it answers every POST /v1/traces with an empty (valid) protobuf
// ExportTraceServiceResponse and keeps only counts, so the figure is the
// gateway's cost of making and exporting spans, not a collector's. It
// runs in-process for `compare --trace` and standalone as
// `mqbench otlp-sink` for ab.sh (TRACE=A, B or AB).

type otlpSink struct {
	ln   net.Listener
	srv  *http.Server
	done chan error

	requests, bytes atomic.Int64
}

func startOTLPSink(addr string) (*otlpSink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	k := &otlpSink{ln: ln, done: make(chan error, 1)}
	k.srv = &http.Server{Handler: http.HandlerFunc(k.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { k.done <- k.srv.Serve(ln) }()
	return k, nil
}

func (k *otlpSink) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	n, _ := io.Copy(io.Discard, r.Body)
	k.requests.Add(1)
	k.bytes.Add(n)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK) // an empty body is an empty response message
}

// Endpoint is the value for OTEL_EXPORTER_OTLP_ENDPOINT.
func (k *otlpSink) Endpoint() string { return "http://" + k.ln.Addr().String() }

func (k *otlpSink) String() string {
	return fmt.Sprintf("OTLP sink %s: %d export requests, %d bytes", k.Endpoint(), k.requests.Load(), k.bytes.Load())
}

func (k *otlpSink) Close(ctx context.Context) error {
	err := k.srv.Shutdown(ctx)
	if serr := <-k.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// otlpSinkMain is `mqbench otlp-sink`: the sink until interrupted; the
// first line names the endpoint, the last the counts.
func otlpSinkMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("otlp-sink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:4318", "listen address (port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	k, err := startOTLPSink(*addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mqbench otlp-sink listening on %s\n", k.Endpoint())
	<-ctx.Done()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = k.Close(shutCtx)
	fmt.Fprintln(stdout, k)
	return err
}
