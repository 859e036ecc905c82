package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGINT stops a run early; the partial figures are still printed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: mqbench <mode> [flags]

modes:
  publish          publish load against a gateway (default mode)
  compare          publish load against baseline-server and the gateway, A/B
  baseline-server  bare HTTP server with the publish routes, stores nothing
  consume          pre-publish, then N consumers receive+ack
  latency          publish at a fixed rate, measure publish->receive latency
  disk             the disk's own fdatasync latency at a fixed rate (latency's floor)
  webhook          publish at a fixed rate to a push group, measure publish->webhook
  streams          WebSocket streams beside REST in one run: publish, consume, latency, server CPU/msg
  jetstream        in-process 3-node JetStream cluster: two gateways vs a direct client vs embedded
  otlp-sink        an OTLP/HTTP trace sink that discards spans (tracing-on figures; ab.sh TRACE=)

run 'mqbench <mode> -h' for the flags of a mode.
`

// run is main without the process: tests call it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	mode := "publish"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		mode, args = args[0], args[1:]
	}
	var err error
	switch mode {
	case "publish":
		err = publishMain(ctx, args, stdout, stderr)
	case "compare":
		err = compareMain(ctx, args, stdout, stderr)
	case "baseline-server":
		err = baselineMain(ctx, args, stdout, stderr)
	case "otlp-sink":
		err = otlpSinkMain(ctx, args, stdout, stderr) // otlpsink.go
	case "consume":
		err = consumeMain(ctx, args, stdout, stderr)
	case "latency":
		err = latencyMain(ctx, args, stdout, stderr)
	case "webhook":
		err = webhookMain(ctx, args, stdout, stderr)
	case "disk":
		err = diskMain(ctx, args, stdout, stderr) // disk.go
	case "streams":
		err = streamsMain(ctx, args, stdout, stderr) // streams.go
	case "jetstream":
		err = jetstreamMain(ctx, args, stdout, stderr) // jetstream.go
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mqbench: unknown mode %q\n\n%s", mode, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "mqbench %s: %v\n", mode, err)
		return 2
	default:
		fmt.Fprintf(stderr, "mqbench %s: %v\n", mode, err)
		return 1
	}
}

// usageError is a bad flag value: exit status 2, like the flag package.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}
