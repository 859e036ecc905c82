package main

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// LatencySummary is the distribution of one kind of duration (a request's
// round trip, or a message's publish→receive time), in milliseconds for
// machine readers.
type LatencySummary struct {
	Count  int     `json:"count"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
}

// summarize sorts d in place and returns its percentiles. Sorting a slice
// is exact and, at a few million samples per run, cheap next to the run
// itself; an HDR histogram would only matter for unbounded runs.
func summarize(d []time.Duration) LatencySummary {
	if len(d) == 0 {
		return LatencySummary{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	return LatencySummary{
		Count:  len(d),
		MeanMs: ms(sum / time.Duration(len(d))),
		P50Ms:  ms(percentile(d, 50)),
		P90Ms:  ms(percentile(d, 90)),
		P99Ms:  ms(percentile(d, 99)),
		MaxMs:  ms(d[len(d)-1]),
	}
}

// percentile is the nearest-rank percentile of sorted: the smallest value
// with at least p% of the samples at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median of xs (the mean of the middle two for an even count); xs is not
// modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianOf applies median to one field of each run.
func medianOf[T any](runs []T, field func(T) float64) float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = field(r)
	}
	return median(xs)
}

// medianCount is medianOf for a count field.
func medianCount[T any](runs []T, field func(T) int64) int64 {
	return int64(medianOf(runs, func(r T) float64 { return float64(field(r)) }))
}

// medianLatencyOf is medianLatency over one summary field of each run.
func medianLatencyOf[T any](runs []T, field func(T) LatencySummary) LatencySummary {
	ls := make([]LatencySummary, len(runs))
	for i, r := range runs {
		ls[i] = field(r)
	}
	return medianLatency(ls)
}

// medianLatency is the per-field median of several runs' summaries. It is
// not the latency distribution of the runs pooled: it says what a typical
// run looks like, which is what A/B comparison needs.
func medianLatency(ls []LatencySummary) LatencySummary {
	f := func(get func(LatencySummary) float64) float64 { return medianOf(ls, get) }
	return LatencySummary{
		Count:  int(f(func(l LatencySummary) float64 { return float64(l.Count) })),
		MeanMs: f(func(l LatencySummary) float64 { return l.MeanMs }),
		P50Ms:  f(func(l LatencySummary) float64 { return l.P50Ms }),
		P90Ms:  f(func(l LatencySummary) float64 { return l.P90Ms }),
		P99Ms:  f(func(l LatencySummary) float64 { return l.P99Ms }),
		MaxMs:  f(func(l LatencySummary) float64 { return l.MaxMs }),
	}
}

// statusCounts counts answers by HTTP status; "net" counts transport errors
// (refused, reset, timeout), which have no status.
type statusCounts map[string]int64

const statusNet = "net"

func (s statusCounts) add(status int, n int64) {
	k := statusNet
	if status > 0 {
		k = strconv.Itoa(status)
	}
	s[k] += n
}

func (s statusCounts) merge(o statusCounts) {
	for k, v := range o {
		s[k] += v
	}
}

// String lists the counts in key order, e.g. "429:3 503:1 net:2".
func (s statusCounts) String() string {
	if len(s) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += " "
		}
		out += k + ":" + strconv.FormatInt(s[k], 10)
	}
	return out
}

// rate is n per second over d (0 for an empty interval).
func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}
