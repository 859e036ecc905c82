package main

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
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
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), "mqgate_stream_frames_total{")
		if !found {
			continue
		}
		labels, value, found := strings.Cut(line, "} ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		kind, dir := -1, -1
		for _, l := range strings.Split(labels, ",") {
			switch l {
			case `kind="consume"`:
				kind = 0
			case `kind="publish"`:
				kind = 1
			case `direction="in"`:
				dir = 0
			case `direction="out"`:
				dir = 1
			}
		}
		if kind >= 0 && dir >= 0 {
			f[kind][dir] = v
			ok = true
		}
	}
	return f, ok
}

// streamKindOf is the stream kind a case's frames are counted under.
func streamKindOf(caseName string) int {
	if strings.HasPrefix(caseName, "publish") {
		return 1
	}
	return 0
}
