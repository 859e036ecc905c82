package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

// What every mode does around its measurement: run it --runs times, each
// on fresh names, and print one table row per run plus their median.

// repeatRuns calls run n times and collects the results; it stops early
// (keeping what it has) when ctx ends, and a failed run fails the report.
func repeatRuns[R any](ctx context.Context, n int, run func(context.Context) (R, error)) ([]R, error) {
	var runs []R
	for i := range n {
		r, err := run(ctx)
		if err != nil {
			return runs, fmt.Errorf("run %d: %w", i+1, err)
		}
		runs = append(runs, r)
		if ctx.Err() != nil {
			break
		}
	}
	return runs, nil
}

// runNames are one run's topic and group: the flags' when given, else new
// ones (topicPrefix or groupPrefix and a random id) so that no run sees an
// earlier run's leftovers.
func runNames(topic, group, topicPrefix, groupPrefix string) (string, string) {
	id := runID()
	if topic == "" {
		topic = topicPrefix + id
	}
	if group == "" {
		group = groupPrefix + id
	}
	return topic, group
}

// writeRunRows prints a row per run ("run 1", ...) and, when there was
// more than one, the median's row, then flushes the table.
func writeRunRows[R any](tw *tabwriter.Writer, runs []R, median R, row func(name string, r R)) error {
	for i, r := range runs {
		row(fmt.Sprintf("run %d", i+1), r)
	}
	if len(runs) > 1 {
		row("median", median)
	}
	return tw.Flush()
}

// writeRunErrors prints each run's first error under the table.
func writeRunErrors[R any](w io.Writer, runs []R, firstErr func(R) string) {
	for i, r := range runs {
		if e := firstErr(r); e != "" {
			fmt.Fprintf(w, "run %d first error: %s\n", i+1, e)
		}
	}
}
