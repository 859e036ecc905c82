package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// streamFrames reads the gateway's mqgate_stream_frames_total: by kind
// (0 consume, 1 publish), the frames read (0) and written (1). false when
// the gateway has no such metric (an older one, or /metrics refused).
func streamFrames(ctx context.Context, base, key string) (f [2][2]float64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/metrics", nil)
	if err != nil {
		return f, false
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return f, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return f, false
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	fam := fams["mqgate_stream_frames_total"]
	if err != nil || fam == nil {
		return f, false
	}
	kinds := map[string]int{"consume": 0, "publish": 1}
	dirs := map[string]int{"in": 0, "out": 1}
	for _, m := range fam.GetMetric() {
		kind, dir := -1, -1
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "kind":
				if k, found := kinds[l.GetValue()]; found {
					kind = k
				}
			case "direction":
				if d, found := dirs[l.GetValue()]; found {
					dir = d
				}
			}
		}
		if kind >= 0 && dir >= 0 {
			f[kind][dir] = m.GetCounter().GetValue()
			ok = true
		}
	}
	return f, ok
}

// streamKindOf is the stream kind whose frames a case is counted under;
// false for a case with no stream (the REST ones).
func streamKindOf(caseName string) (int, bool) {
	switch {
	case !strings.Contains(caseName, "stream"):
		return 0, false
	case strings.HasPrefix(caseName, "publish"):
		return 1, true
	default:
		return 0, true
	}
}
