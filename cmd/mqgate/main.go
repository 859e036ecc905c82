package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/mqgate/mqgate/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

var usage = `mqgate — HTTP/REST gateway over an embedded RocketMQ-style message engine

Server:
  mqgate serve [flags]        run the server (mqgate serve -h for flags)
  mqgate healthcheck [flags]  exit 0 when the local server answers /healthz
  mqgate backup [flags]       write a verified copy of the store (--url of a running server, or --data)
  mqgate compact [flags]      shrink a stopped server's store file to its data (--data)
  mqgate check DATA_DIR       read a stopped server's store and report damage (-o json; exit 0 healthy, 1 damaged)
  mqgate version              print the version

Client (over the HTTP API; --url / MQGATE_URL, --key / MQGATE_KEY, -o table|json;
mqgate COMMAND -h for flags; exit codes in docs/cli.md):
` + cli.Help()

// run dispatches a subcommand and returns the exit code.
// Global client flags may come before the command word (`mqgate --url U
// topic list`); they are handed to the command as its own flags.
func run(args []string, stdout, stderr io.Writer) int {
	name, rest, bad := cli.HoistGlobalFlags(args)
	if bad != "" {
		fmt.Fprintf(stderr, "mqgate: flag needs an argument: %s\n", bad)
		return cli.ExitUsage
	}
	if name == "" {
		fmt.Fprint(stderr, usage)
		return cli.ExitUsage
	}
	args = append([]string{name}, rest...)
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "healthcheck":
		return healthcheck(args[1:], stderr)
	case "backup":
		return backup(args[1:], stdout, stderr)
	case "compact":
		return compact(args[1:], stdout, stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "mqgate", Version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	if cli.IsCommand(args[0]) {
		// SIGINT ends the command cleanly (sub stops between batches).
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return cli.Run(ctx, args[0], args[1:], os.Stdin, stdout, stderr)
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "mqgate: %s is not a flag that may come before the command (those are --url, --key, -o and --timeout); give a command's own flags after it\n\n%s", args[0], usage)
		return cli.ExitUsage
	}
	fmt.Fprintf(stderr, "mqgate: unknown command %q\n\n%s", args[0], usage)
	return cli.ExitUsage
}

// serve runs the server until SIGINT or SIGTERM, then shuts down
// gracefully. A second signal during shutdown kills the process at once
// (the default signal behaviour is restored when ctx is done).
func serve(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m := NewMain()
	if err := m.ParseFlags(args, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "mqgate:", err)
		return cli.ExitUsage
	}
	tuned, err := tuneGC()
	if err != nil {
		fmt.Fprintln(stderr, "mqgate:", err)
		return cli.ExitUsage
	}
	defer tuned.stop()
	ev := m.Logger.Debug().Int("gogc", tuned.gcPercent).Int64("heap_floor", tuned.heapFloor).
		Int("gomaxprocs", runtime.GOMAXPROCS(0))
	if tuned.memLimit != math.MaxInt64 {
		ev = ev.Int64("memory_limit", tuned.memLimit)
	}
	ev.Msg("runtime tuned")
	if err := m.Run(); err != nil {
		fmt.Fprintln(stderr, "mqgate:", err)
		m.Close()
		return 1
	}
	signalled := false
	select {
	case <-ctx.Done():
		m.Logger.Info().Msg("signal received, shutting down")
		signalled = true
	case err := <-m.Done():
		m.Logger.Error().Err(err).Msg("server stopped")
	}
	stop()
	if signalled {
		m.shutdownDelay() // drain.go: /readyz 503 for --shutdown-delay, still serving
	}
	if err := m.Close(); err != nil {
		fmt.Fprintln(stderr, "mqgate: shutdown:", err)
		return 1
	}
	return 0
}
