package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
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
}

// DefaultConfig returns the defaults, overridden by MQGATE_* variables.
func DefaultConfig() Config {
	c := Config{Addr: ":8080", Data: "./data", LogLevel: "info", LogFormat: "auto", ShutdownTimeout: 30 * time.Second}
	env := func(name string, dst *string) {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			*dst = v
		}
	}
	env("MQGATE_ADDR", &c.Addr)
	env("MQGATE_DATA", &c.Data)
	env("MQGATE_LOG_LEVEL", &c.LogLevel)
	env("MQGATE_LOG_FORMAT", &c.LogFormat)
	if v := os.Getenv("MQGATE_SHUTDOWN_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			c.ShutdownTimeout = d
		}
	}
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
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("--shutdown-timeout must be positive"))
	}
	return errors.Join(errs...)
}
