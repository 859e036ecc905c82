package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// PublishReport is the output of publish: each run and their medians.
type PublishReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []PublishRun   `json:"runs"`
	Median PublishRun     `json:"median"`
}

func (r PublishReport) write(w io.Writer, asJSON bool) error {
	r.Mode = "publish"
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	publishHeader(tw)
	if err := writeRunRows(tw, r.Runs, r.Median, func(name string, run PublishRun) { publishRow(tw, name, run) }); err != nil {
		return err
	}
	writeFirstErrors(w, r.Runs)
	return nil
}

func publishHeader(tw *tabwriter.Writer) {
	fmt.Fprintln(tw, "\tmsgs/s\tMB/s\treq/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tok msgs\tfailed\tclient cpu\tserver cpu\terrors\t")
}

func publishRow(tw *tabwriter.Writer, name string, r PublishRun) {
	fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%.2f\t%s\t%s\t\n",
		name, r.MsgsPerSec, r.MBPerSec, r.ReqsPerSec,
		r.Latency.P50Ms, r.Latency.P90Ms, r.Latency.P99Ms, r.Latency.MaxMs,
		r.Messages, r.Failed, r.ClientCPU, cores(r.ServerCPU), r.Errors)
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// writeConfig prints the settings of a report on one line, keys sorted.
func writeConfig(w io.Writer, cfg map[string]any) {
	for i, k := range slices.Sorted(maps.Keys(cfg)) {
		if i > 0 {
			fmt.Fprint(w, " ")
		}
		fmt.Fprintf(w, "%s=%v", k, cfg[k])
	}
	fmt.Fprintln(w)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeFirstErrors prints each failing run's first error under the table.
func writeFirstErrors(w io.Writer, runs []PublishRun) {
	for i, r := range runs {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s run %d first error: %s\n", r.Target, i+1, r.FirstError)
		}
	}
}

// cores formats a CPU share, "-" when unknown.
func cores(c float64) string {
	if c == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", c)
}

// perMsg shows server CPU per message in microseconds, "-" when not
// measured.
func perMsg(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", us)
}
