package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// compare runs the same publish load against the bare-HTTP baseline and
// the gateway, alternating which goes first each round (A/B, B/A, ...) so
// that drift of the machine (thermal, page cache, the gateway's growing
// file) does not favour one side, and reports medians and their ratio.

type compareConfig struct {
	publishConfig
	GatewayBin  string
	GatewayArgs string
	// Trace starts the gateway with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT)
	// toward an in-process OTLP sink; off, the gateway's OTEL_* variables
	// are cleared so that tracing is surely off.
	Trace    bool
	KeepData bool
}

func compareMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg compareConfig
	addPublishFlags(fs, &cfg.publishConfig, 3)
	fs.StringVar(&cfg.GatewayBin, "gateway-bin", "", "mqgate binary to start on a free port with a temp --data dir, instead of using --url (go build ./cmd/mqgate)")
	fs.BoolVar(&cfg.Trace, "trace", false, "with --gateway-bin: start it with OpenTelemetry tracing on, exporting to an in-process OTLP/HTTP sink that discards spans (off: OTEL_* cleared)")
	fs.StringVar(&cfg.GatewayArgs, "gateway-args", "", "extra flags for the started gateway, space separated (e.g. \"--log-level warn\")")
	fs.BoolVar(&cfg.KeepData, "keep-data", false, "keep the started gateway's data dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	urlSet := false
	fs.Visit(func(f *flag.Flag) { urlSet = urlSet || f.Name == "url" })
	switch {
	case cfg.GatewayBin != "" && urlSet && cfg.URL != "":
		return usagef("give --url of a running gateway or --gateway-bin to start one, not both")
	case cfg.GatewayBin != "":
		cfg.URL = "" // start it
	case cfg.URL == "":
		return usagef("need --url of a running gateway or --gateway-bin to start one")
	}
	rep, err := runCompare(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	return rep.write(stdout, cfg.JSON)
}

// CompareReport is the output of compare.
type CompareReport struct {
	Mode     string         `json:"mode"`
	Config   map[string]any `json:"config"`
	Baseline []PublishRun   `json:"baseline"`
	Gateway  []PublishRun   `json:"gateway"`
	// Medians over the runs of each side.
	BaselineMedian PublishRun `json:"baselineMedian"`
	GatewayMedian  PublishRun `json:"gatewayMedian"`
	// Ratio is the gateway's median msgs/s over the baseline's.
	Ratio float64 `json:"ratio"`
}

func runCompare(ctx context.Context, cfg compareConfig, logw io.Writer) (rep CompareReport, err error) {
	self, err := os.Executable()
	if err != nil {
		return rep, err
	}
	base, err := startBaselineChild(ctx, self)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, base.stop()) }()

	gwURL, gwPID := cfg.URL, cfg.ServerPID
	if gwURL == "" {
		dir, err := os.MkdirTemp("", "mqbench-gateway-")
		if err != nil {
			return rep, err
		}
		if !cfg.KeepData {
			defer os.RemoveAll(dir)
		} else {
			fmt.Fprintf(logw, "gateway data dir: %s\n", dir)
		}
		env := withoutOTEL(os.Environ())
		if cfg.Trace {
			sink, err := startOTLPSink("127.0.0.1:0")
			if err != nil {
				return rep, err
			}
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = errors.Join(err, sink.Close(sctx))
				fmt.Fprintln(logw, sink)
			}()
			env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.Endpoint())
		}
		gw, err := startGatewayChild(ctx, cfg.GatewayBin, dir, strings.Fields(cfg.GatewayArgs), env)
		if err != nil {
			return rep, err
		}
		defer func() { err = errors.Join(err, gw.stop()) }()
		gwURL, gwPID = gw.url, gw.cmd.Process.Pid
	}

	rep.Config = cfg.describe()
	rep.Config["url"] = gwURL
	rep.Config["trace"] = cfg.Trace
	rep.Config["baselineUrl"] = base.url
	for round := range cfg.Runs {
		order := []string{"baseline", "gateway"}
		if round%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, side := range order {
			pc := cfg.publishConfig
			pc.URL, pc.ServerPID = gwURL, gwPID
			if side == "baseline" {
				pc.URL, pc.ServerPID = base.url, base.cmd.Process.Pid
			}
			fmt.Fprintf(logw, "round %d/%d: %s ...\n", round+1, cfg.Runs, side)
			r, err := runPublish(ctx, pc, side)
			if err != nil {
				return rep, fmt.Errorf("round %d, %s: %w", round+1, side, err)
			}
			if side == "baseline" {
				rep.Baseline = append(rep.Baseline, r)
			} else {
				rep.Gateway = append(rep.Gateway, r)
			}
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
		}
	}
	rep.BaselineMedian = medianRun(rep.Baseline)
	rep.GatewayMedian = medianRun(rep.Gateway)
	if rep.BaselineMedian.MsgsPerSec > 0 {
		rep.Ratio = rep.GatewayMedian.MsgsPerSec / rep.BaselineMedian.MsgsPerSec
	}
	return rep, nil
}

func (r CompareReport) write(w io.Writer, asJSON bool) error {
	r.Mode = "compare"
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	publishHeader(tw)
	for i := range max(len(r.Baseline), len(r.Gateway)) {
		if i < len(r.Baseline) {
			publishRow(tw, fmt.Sprintf("baseline %d", i+1), r.Baseline[i])
		}
		if i < len(r.Gateway) {
			publishRow(tw, fmt.Sprintf("gateway %d", i+1), r.Gateway[i])
		}
	}
	publishRow(tw, "baseline median", r.BaselineMedian)
	publishRow(tw, "gateway median", r.GatewayMedian)
	if err := tw.Flush(); err != nil {
		return err
	}
	writeFirstErrors(w, r.Baseline)
	writeFirstErrors(w, r.Gateway)
	_, err := fmt.Fprintf(w, "gateway/baseline msgs/s: %.1f%%\n", 100*r.Ratio)
	return err
}
