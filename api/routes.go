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
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, requireJSON)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		sendProblem(w, r, newProblem(core.ENotFound, "no such resource: "+r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		// RFC 9110 §15.5.6: a 405 lists the methods the resource has.
		w.Header().Set("Allow", strings.Join(allowedMethods(r, req.URL.Path), ", "))
		sendProblem(w, req, newProblem(codeNoMethod, req.Method+" is not allowed on "+req.URL.Path))
	})

	// Operations.
	r.Get("/healthz", s.handleHealthz)
	r.Head("/healthz", s.handleHealthzHead)
	r.Get("/readyz", s.handleReadyz)
	r.Head("/readyz", s.handleReadyzHead)
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	r.Get("/openapi.json", s.handleOpenAPI)
	r.Get("/docs", s.handleDocs)
	r.Handle("/console", console.Handler("/console")) // the web console (console/)
	r.Handle("/console/*", console.Handler("/console"))

	r.Route("/v1", func(r chi.Router) {
		// API keys (auth.go): every /v1 route needs the grant routeAccess
		// gives it; without --api-keys the API is open.
		if s.keys != nil {
			r.Use(s.authorize(r))
		}

		// Topics (topics.go).
		r.Get("/topics", s.handleTopicList)
		r.Put("/topics/{topic}", s.handleTopicPut)
		r.Get("/topics/{topic}", s.handleTopicGet)
		r.Delete("/topics/{topic}", s.handleTopicDelete)
		r.Get("/topics/{topic}/corrupt", s.handleCorruptList) // corrupt.go
		r.Post("/topics/{topic}/purge", s.handleTopicPurge)   // jobs.go
		r.Get("/jobs/{id}", s.handleJobGet)                   // jobs.go

		// Publishing (messages.go) and reading (messages_read.go).
		r.Post("/topics/{topic}/messages", s.handleMessagePublish)
		r.Post("/topics/{topic}/messages/batch", s.handleMessagePublishBatch)
		r.Get("/topics/{topic}/messages", s.handleMessageQuery)
		r.Get("/topics/{topic}/messages/{messageId}", s.handleMessageGet)

		// Consumer groups (groups.go) and consuming (consume.go).
		r.With(s.needConsumption).Group(func(r chi.Router) {
			r.Get("/groups", s.handleGroupList)
			r.Put("/groups/{group}", s.handleGroupPut)
			r.Get("/groups/{group}", s.handleGroupGet)
			r.Delete("/groups/{group}", s.handleGroupDelete)
			r.Get("/groups/{group}/offsets", s.handleGroupOffsets)
			r.Post("/groups/{group}/offsets/reset", s.handleGroupOffsetsReset)
			r.Post("/groups/{group}/receive", s.handleReceive)
			r.Post("/groups/{group}/ack", s.handleAck)
			r.Post("/groups/{group}/nack", s.handleNack)
			r.Post("/groups/{group}/extend", s.handleExtend)

			// Dead letters (dlq.go).
			r.Get("/groups/{group}/dlq", s.handleDLQList)
			r.Post("/groups/{group}/dlq/redrive", s.handleDLQRedrive)
			r.Post("/groups/{group}/dlq/purge", s.handleDLQPurge) // jobs.go

			// Blocked ordering keys (blocked.go).
			r.Get("/groups/{group}/blocked", s.handleBlockedList)
			r.Post("/groups/{group}/blocked/skip", s.handleBlockedSkip)
			r.Post("/groups/{group}/blocked/park", s.handleBlockedPark)
			r.Post("/groups/{group}/blocked/resume", s.handleBlockedResume)
			r.Get("/groups/{group}/keys", s.handleKeyLags)                           // keys.go
			r.Get("/groups/{group}/messages/{messageId}/timeline", s.handleTimeline) // timeline.go
			r.Post("/groups/{group}/pause", s.handleGroupPause)                      // pause.go
			r.Post("/groups/{group}/resume", s.handleGroupResume)
		})

		// Operators (admin.go).
		r.Get("/admin/backup", s.handleBackup)
	})
	return r
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
