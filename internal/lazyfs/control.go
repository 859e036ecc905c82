package lazyfs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Handler is the control API another process uses, to be served on a
// loopback listener:
//
//	POST /cut?keep=0.5&tear=1&seed=7   cut the power; answers the CutReport
//	POST /hold                         HoldSyncs: fsyncs wait for the cut
//	GET  /stats                        the Stats
func (l *FS) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /cut", func(w http.ResponseWriter, r *http.Request) {
		opts, err := parseCut(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep, err := l.Cut(opts)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		writeJSON(w, rep)
	})
	mux.HandleFunc("POST /hold", func(w http.ResponseWriter, r *http.Request) {
		l.HoldSyncs()
		writeJSON(w, l.Stats())
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, l.Stats())
	})
	return mux
}

func parseCut(r *http.Request) (CutOptions, error) {
	var o CutOptions
	q := r.URL.Query()
	if v := q.Get("keep"); v != "" {
		k, err := strconv.ParseFloat(v, 64)
		if err != nil || k < 0 || k > 1 {
			return o, fmt.Errorf("keep %q: want a probability from 0 to 1", v)
		}
		o.Keep = k
	}
	if v := q.Get("tear"); v != "" {
		t, err := strconv.ParseBool(v)
		if err != nil {
			return o, fmt.Errorf("tear %q: want a boolean", v)
		}
		o.Tear = t
	}
	if v := q.Get("seed"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("seed %q: want an unsigned integer", v)
		}
		o.Seed = s
	}
	return o, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
