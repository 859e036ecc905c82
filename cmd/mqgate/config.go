package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core/engine"
)

// Config is everything `mqgate serve` can be told. Each field has a flag
// and an MQGATE_* variable; a flag given on the command line wins.
type Config struct {
	// Addr is the TCP address to listen on (host:port; port 0 picks one).
	Addr string
	// Data is the data directory; the store is Data/mqgate.db.
	Data string
	// LogLevel is trace, debug, info, warn or error.
	LogLevel string
	// LogFormat is json, console or auto (console when stderr is a
	// terminal, else json).
	LogFormat string
	// ShutdownTimeout bounds how long in-flight requests may take to
	// finish after SIGTERM before connections are closed.
	ShutdownTimeout time.Duration
	// DelayLevels are the durations of delay levels 1..N, space or comma
	// separated (RocketMQ messageDelayLevel).
	DelayLevels string
	// MaxDelay bounds delaySeconds and deliverAt of timer messages.
	MaxDelay time.Duration
	// CacheBudgetMiB caps the message bytes prefetched by all consumer
	// groups together (SPEC §5), shared fairly among them.
	CacheBudgetMiB int
	// WebhookAllowLoopback lets push groups' webhooks reach 127.0.0.0/8
	// and ::1 (tests, local development); denied by default.
	WebhookAllowLoopback bool
	// WebhookAllowCIDRs are networks or addresses webhooks may reach even
	// inside a denied range; WebhookDenyCIDRs are denied on top of the
	// defaults (loopback, link-local, metadata, multicast).
	WebhookAllowCIDRs, WebhookDenyCIDRs []string
	// PprofAddr, when set, serves net/http/pprof on this address, on a
	// listener of its own (never the API's). Off by default: profiles
	// expose internals, so bind it to loopback or an admin network.
	PprofAddr string
}

// listFlag is a repeatable string flag; the first use on the command line
// replaces what the environment gave, later uses add to it.
type listFlag struct {
	dst *[]string
	set bool
}

func (f *listFlag) String() string {
	if f.dst == nil {
		return ""
	}
	return strings.Join(*f.dst, ",")
}

func (f *listFlag) Set(v string) error {
	if !f.set {
		*f.dst, f.set = nil, true
	}
	*f.dst = append(*f.dst, splitList(v)...)
	return nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// defaultDelayLevels is RocketMQ's messageDelayLevel.
const defaultDelayLevels = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// DefaultConfig returns the defaults, overridden by MQGATE_* variables.
func DefaultConfig() Config {
	c := Config{Addr: ":8080", Data: "./data", LogLevel: "info", LogFormat: "auto", ShutdownTimeout: 30 * time.Second,
		DelayLevels: defaultDelayLevels, MaxDelay: 40 * 24 * time.Hour,
		CacheBudgetMiB: 256}
	env := func(name string, dst *string) {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			*dst = v
		}
	}
	env("MQGATE_ADDR", &c.Addr)
	env("MQGATE_DATA", &c.Data)
	env("MQGATE_LOG_LEVEL", &c.LogLevel)
	env("MQGATE_LOG_FORMAT", &c.LogFormat)
	env("MQGATE_DELAY_LEVELS", &c.DelayLevels)
	env("MQGATE_PPROF_ADDR", &c.PprofAddr)
	envDuration := func(name string, dst *time.Duration) {
		if v := os.Getenv(name); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				*dst = d
			}
		}
	}
	envDuration("MQGATE_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	envDuration("MQGATE_MAX_DELAY", &c.MaxDelay)
	if v := os.Getenv("MQGATE_CACHE_BUDGET_MIB"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			c.CacheBudgetMiB = n
		}
	}
	if v := os.Getenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK"); v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			c.WebhookAllowLoopback = b
		}
	}
	c.WebhookAllowCIDRs = splitList(os.Getenv("MQGATE_WEBHOOK_ALLOW_CIDRS"))
	c.WebhookDenyCIDRs = splitList(os.Getenv("MQGATE_WEBHOOK_DENY_CIDRS"))
	return c
}

// parseServeFlags parses `mqgate serve` flags over the defaults.
func parseServeFlags(args []string, out io.Writer) (Config, error) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("mqgate serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address, host:port (env MQGATE_ADDR)")
	fs.StringVar(&c.Data, "data", c.Data, "data directory (env MQGATE_DATA)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "trace|debug|info|warn|error (env MQGATE_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "json|console|auto (env MQGATE_LOG_FORMAT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "time in-flight requests get to finish on shutdown (env MQGATE_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.DelayLevels, "delay-levels", c.DelayLevels, "durations of delay levels 1..N, e.g. \"100ms 200ms 1s\" (env MQGATE_DELAY_LEVELS)")
	fs.DurationVar(&c.MaxDelay, "max-delay", c.MaxDelay, "longest delaySeconds / deliverAt accepted (env MQGATE_MAX_DELAY)")
	fs.IntVar(&c.CacheBudgetMiB, "cache-budget-mib", c.CacheBudgetMiB, "MiB of messages all consumer groups may prefetch together (env MQGATE_CACHE_BUDGET_MIB)")
	fs.BoolVar(&c.WebhookAllowLoopback, "webhook-allow-loopback", c.WebhookAllowLoopback, "let webhooks reach loopback addresses (env MQGATE_WEBHOOK_ALLOW_LOOPBACK=true)")
	fs.Var(&listFlag{dst: &c.WebhookAllowCIDRs}, "webhook-allow-cidr", "network or address webhooks may reach even if denied; repeatable (env MQGATE_WEBHOOK_ALLOW_CIDRS, comma-separated)")
	fs.Var(&listFlag{dst: &c.WebhookDenyCIDRs}, "webhook-deny-cidr", "network or address webhooks may not reach, besides the defaults; repeatable (env MQGATE_WEBHOOK_DENY_CIDRS, comma-separated)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", c.PprofAddr, "serve net/http/pprof on this separate address, e.g. 127.0.0.1:6060; off when empty (env MQGATE_PPROF_ADDR)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func (c Config) validate() error {
	var errs []error
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		errs = append(errs, fmt.Errorf("--log-level %q: want trace, debug, info, warn or error", c.LogLevel))
	}
	switch c.LogFormat {
	case "json", "console", "auto":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: want json, console or auto", c.LogFormat))
	}
	if c.Data == "" {
		errs = append(errs, errors.New("--data must not be empty"))
	}
	if _, err := engine.ParseDelayLevels(c.DelayLevels); err != nil {
		errs = append(errs, fmt.Errorf("--delay-levels: %w", err))
	}
	if c.CacheBudgetMiB < 1 {
		errs = append(errs, errors.New("--cache-budget-mib must be at least 1"))
	}
	if c.MaxDelay <= 0 {
		errs = append(errs, errors.New("--max-delay must be positive"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("--shutdown-timeout must be positive"))
	}
	for _, l := range []struct {
		flag  string
		cidrs []string
	}{{"--webhook-allow-cidr", c.WebhookAllowCIDRs}, {"--webhook-deny-cidr", c.WebhookDenyCIDRs}} {
		for _, s := range l.cidrs {
			if !validCIDR(s) {
				errs = append(errs, fmt.Errorf("%s %q: want a CIDR (10.0.0.0/8) or an IP address", l.flag, s))
			}
		}
	}
	return errors.Join(errs...)
}

func validCIDR(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}
