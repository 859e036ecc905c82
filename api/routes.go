package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mqgate/mqgate/console"
	"github.com/mqgate/mqgate/core"
)

// routes registers every route in one block, so the whole surface reads
// in one place. Consumption routes (groups, receive, ack…) go in the /v1
// block next to topics.
//
// The /v1 routes sit in the one mux under their full paths, not in a
// mounted sub-router: a request is routed once (no second tree walk, no
// route path or pattern rebuilt per request). What a mount did besides
// routing, v1Fallback keeps for the paths under /v1 that match no route.
func (s *Server) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(s.instrument, requireJSON)
	r.NotFound(s.v1Fallback(func(w http.ResponseWriter, r *http.Request) {
		sendProblem(w, r, newProblem(core.ENotFound, "no such resource: "+r.URL.Path))
	}))
	r.MethodNotAllowed(s.v1Fallback(func(w http.ResponseWriter, req *http.Request) {
		// RFC 9110 §15.5.6: a 405 lists the methods the resource has.
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req.URL.Path), ", "))
		sendProblem(w, req, newProblem(codeNoMethod, req.Method+" is not allowed on "+req.URL.Path))
	}))

	// Operations.
	r.Get("/healthz", s.handleHealthz)
	r.Head("/healthz", s.handleHealthzHead)
	r.Get("/readyz", s.handleReadyz)
	r.Head("/readyz", s.handleReadyzHead)
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	r.Get("/openapi.json", s.handleOpenAPI)
	r.Get("/docs", s.handleDocs)
	// The web console (console/): static files, read with GET or HEAD; any
	// other method is 405 like on every documented route.
	consoleFiles := console.Handler("/console")
	for _, p := range []string{"/console", "/console/*"} {
		r.Method(http.MethodGet, p, consoleFiles)
		r.Method(http.MethodHead, p, consoleFiles)
	}

	r.Group(func(r chi.Router) {
		// API keys (auth.go): every /v1 route needs the grant routeAccess
		// gives it; without --api-keys the API is open.
		if s.keys != nil {
			r.Use(s.authorize)
		}

		// Topics (topics.go).
		r.Get("/v1/topics", s.handleTopicList)
		r.Put("/v1/topics/{topic}", s.handleTopicPut)
		r.Get("/v1/topics/{topic}", s.handleTopicGet)
		r.Delete("/v1/topics/{topic}", s.handleTopicDelete)
		r.Get("/v1/topics/{topic}/corrupt", s.handleCorruptList) // corrupt.go
		r.Post("/v1/topics/{topic}/purge", s.handleTopicPurge)   // jobs.go
		r.Get("/v1/jobs/{id}", s.handleJobGet)                   // jobs.go

		// Publishing (messages.go) and reading (messages_read.go).
		r.Post("/v1/topics/{topic}/messages", s.handleMessagePublish)
		r.Post("/v1/topics/{topic}/messages/batch", s.handleMessagePublishBatch)
		r.Get("/v1/topics/{topic}/messages", s.handleMessageQuery)
		r.Get("/v1/topics/{topic}/messages/{messageId}", s.handleMessageGet)
		r.Get("/v1/topics/{topic}/stream", s.handleTopicStream) // stream_publish.go

		// Consumer groups (groups.go) and consuming (consume.go).
		r.With(s.needConsumption).Group(func(r chi.Router) {
			r.Get("/v1/groups", s.handleGroupList)
			r.Put("/v1/groups/{group}", s.handleGroupPut)
			r.Get("/v1/groups/{group}", s.handleGroupGet)
			r.Delete("/v1/groups/{group}", s.handleGroupDelete)
			r.Get("/v1/groups/{group}/offsets", s.handleGroupOffsets)
			r.Post("/v1/groups/{group}/offsets/reset", s.handleGroupOffsetsReset)
			r.Post("/v1/groups/{group}/receive", s.handleReceive)
			r.Post("/v1/groups/{group}/ack", s.handleAck)
			r.Post("/v1/groups/{group}/nack", s.handleNack)
			r.Post("/v1/groups/{group}/extend", s.handleExtend)
			r.Get("/v1/groups/{group}/stream", s.handleGroupStream) // stream_consume.go

			// Dead letters (dlq.go).
			r.Get("/v1/groups/{group}/dlq", s.handleDLQList)
			r.Post("/v1/groups/{group}/dlq/redrive", s.handleDLQRedrive)
			r.Post("/v1/groups/{group}/dlq/purge", s.handleDLQPurge) // jobs.go

			// Blocked ordering keys (blocked.go).
			r.Get("/v1/groups/{group}/blocked", s.handleBlockedList)
			r.Post("/v1/groups/{group}/blocked/skip", s.handleBlockedSkip)
			r.Post("/v1/groups/{group}/blocked/park", s.handleBlockedPark)
			r.Post("/v1/groups/{group}/blocked/resume", s.handleBlockedResume)
			r.Get("/v1/groups/{group}/keys", s.handleKeyLags)                           // keys.go
			r.Get("/v1/groups/{group}/messages/{messageId}/timeline", s.handleTimeline) // timeline.go
			r.Post("/v1/groups/{group}/pause", s.handleGroupPause)                      // pause.go
			r.Post("/v1/groups/{group}/resume", s.handleGroupResume)
		})

		// Operators (admin.go).
		r.Get("/v1/admin/backup", s.handleBackup)
		r.Get("/v1/admin/limits", s.handleLimits) // admin_limits.go
	})
	return r
}

// v1Fallback wraps the 404 and 405 answers with what the /v1 mount gave
// the paths under it that match no route (/v1, /v1/ and /v1/...): the
// route label of the mount's pattern (/v1, /v1/*), and, with API keys,
// the key check first (without a valid key every /v1 path answers 401
// and reveals nothing of the surface). A method chi does not know was
// answered 405 before reaching the mount, and still is.
func (s *Server) v1Fallback(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rctx := chi.RouteContext(r.Context())
		if rctx == nil || !chiMethods[r.Method] {
			h(w, r)
			return
		}
		switch p := routePath(r); {
		case p == "/v1" || p == "/v1/":
			rctx.RoutePatterns = append(rctx.RoutePatterns, p)
		case strings.HasPrefix(p, "/v1/"):
			rctx.RoutePatterns = append(rctx.RoutePatterns, "/v1/*")
		default:
			h(w, r)
			return
		}
		if s.keys == nil {
			h(w, r)
			return
		}
		r, ok := s.authenticated(w, r)
		if ok {
			h(w, r)
		}
	}
}

// chiMethods are the methods chi routes; it answers any other 405
// before looking at the path.
var chiMethods = map[string]bool{
	http.MethodConnect: true, http.MethodDelete: true, http.MethodGet: true,
	http.MethodHead: true, http.MethodOptions: true, http.MethodPatch: true,
	http.MethodPost: true, http.MethodPut: true, http.MethodTrace: true,
}

// routeMethods are the methods allowedMethods tries, in the order an
// Allow header lists them.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods mux routes for path (a 405's Allow).
func allowedMethods(mux chi.Routes, path string) []string {
	var out []string
	for _, m := range routeMethods {
		if mux.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}
