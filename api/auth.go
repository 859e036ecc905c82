package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/auth"
)

// access is what one /v1 route asks of the caller's key: a grant of kind
// on the topic or group its URL parameter param names. A zero kind asks
// only for a valid key; the handler then shows what the key may see.
type access struct {
	kind  auth.Kind
	param string
}

// routeAccess is the one table route → grant, keyed "METHOD pattern" as
// routes.go registers them. A /v1 route missing here is refused to every
// key (fail closed), and TestRouteAccessCoversEveryRoute keeps the table
// and routes.go in step.
var routeAccess = map[string]access{
	// Topics: publishers may read their topics' config; the list shows
	// the topics the key may publish to (all of them for admin).
	"GET /v1/topics":            {},
	"PUT /v1/topics/{topic}":    {kind: auth.Admin},
	"GET /v1/topics/{topic}":    {auth.Pub, "topic"},
	"DELETE /v1/topics/{topic}": {kind: auth.Admin},

	// Messages set aside as corrupt: an operator's view.
	"GET /v1/topics/{topic}/corrupt": {kind: auth.Admin},

	// Publishing and reading back (by id, by key, browsing a queue).
	"POST /v1/topics/{topic}/messages":            {auth.Pub, "topic"},
	"POST /v1/topics/{topic}/messages/batch":      {auth.Pub, "topic"},
	"GET /v1/topics/{topic}/messages":             {auth.Pub, "topic"},
	"GET /v1/topics/{topic}/messages/{messageId}": {auth.Pub, "topic"},
	"GET /v1/topics/{topic}/stream":               {auth.Pub, "topic"},

	// Consumer groups: the list shows the groups the key may consume
	// through; creating, changing and deleting them is admin's.
	"GET /v1/groups":                        {},
	"PUT /v1/groups/{group}":                {kind: auth.Admin},
	"GET /v1/groups/{group}":                {auth.Sub, "group"},
	"DELETE /v1/groups/{group}":             {kind: auth.Admin},
	"GET /v1/groups/{group}/offsets":        {auth.Sub, "group"},
	"POST /v1/groups/{group}/offsets/reset": {kind: auth.Admin},
	"POST /v1/groups/{group}/receive":       {auth.Sub, "group"},
	"POST /v1/groups/{group}/ack":           {auth.Sub, "group"},
	"POST /v1/groups/{group}/nack":          {auth.Sub, "group"},
	"POST /v1/groups/{group}/extend":        {auth.Sub, "group"},
	"GET /v1/groups/{group}/stream":         {auth.Sub, "group"},

	// Dead letters: consumers may look, only admin may redrive.
	"GET /v1/groups/{group}/dlq":          {auth.Sub, "group"},
	"POST /v1/groups/{group}/dlq/redrive": {kind: auth.Admin},
	"POST /v1/groups/{group}/dlq/purge":   {kind: auth.Admin},

	// Purge by filter and its jobs (jobs.go): admin's.
	"POST /v1/topics/{topic}/purge": {kind: auth.Admin},
	"GET /v1/jobs/{id}":             {kind: auth.Admin},

	// Blocked keys: consumers may look, only admin may act.
	"GET /v1/groups/{group}/blocked":         {auth.Sub, "group"},
	"POST /v1/groups/{group}/blocked/skip":   {kind: auth.Admin},
	"POST /v1/groups/{group}/blocked/park":   {kind: auth.Admin},
	"POST /v1/groups/{group}/blocked/resume": {kind: auth.Admin},
	"GET /v1/groups/{group}/keys":            {auth.Sub, "group"},

	"GET /v1/groups/{group}/messages/{messageId}/timeline": {auth.Sub, "group"},

	// Pausing a group is an operator's action.
	"POST /v1/groups/{group}/pause":  {kind: auth.Admin},
	"POST /v1/groups/{group}/resume": {kind: auth.Admin},

	// A copy of the whole store: admin only.
	"GET /v1/admin/backup": {kind: auth.Admin},
	// The keys' limits and their state (admin_limits.go).
	"GET /v1/admin/limits": {kind: auth.Admin},
}

// keyCtx holds the caller's *auth.Key once authorize has let it through.
var keyCtx = &contextKey{"apikey"}

// keyFrom returns the caller's key, or nil when API keys are off.
func keyFrom(ctx context.Context) *auth.Key {
	k, _ := ctx.Value(keyCtx).(*auth.Key)
	return k
}

// visible reports whether the caller may see the topic (Pub) or group
// (Sub) name in a list: always when API keys are off.
func visible(ctx context.Context, kind auth.Kind, name string) bool {
	k := keyFrom(ctx)
	return k == nil || k.Allows(kind, name)
}

// authorize guards the /v1 routes when API keys are configured: 401
// without a known bearer key, 403 when the key lacks the route's grant.
// It runs as the routes' middleware, after routing, so the route pattern
// and parameters it looks up in routeAccess are the ones chi matched.
// Paths under /v1 that match no route get the key check in v1Fallback
// (routes.go).
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ok := s.authenticated(w, r)
		if !ok {
			return
		}
		key := keyFrom(r.Context())
		rctx := chi.RouteContext(r.Context())
		route := r.Method + " " + rctx.RoutePattern()
		acc, ok := routeAccess[route]
		if !ok {
			loggerFrom(r.Context(), s.log).Error().Str("route", route).
				Msg("route has no row in routeAccess; refused to every key")
			forbidden(w, r, key, "this route is not open to API keys")
			return
		}
		if acc.kind != 0 {
			name := unescapeParam(rctx.URLParam(acc.param))
			if !key.Allows(acc.kind, name) {
				forbidden(w, r, key, needs(acc, name))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated answers 401 and reports false when r carries no known
// bearer key; otherwise it returns r with the key in its context (and
// the key's name on the request log line).
func (s *Server) authenticated(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	key, why := s.authenticate(r)
	if key == nil {
		unauthorized(w, r, why)
		return r, false
	}
	if st, ok := r.Context().Value(requestKey).(*requestState); ok {
		st.key = key.Name // for the request log line
	}
	return r.WithContext(context.WithValue(r.Context(), keyCtx, key)), true
}

// authenticate returns the key of the request's bearer token, or nil and
// what is wrong (for the 401's detail; never the token itself).
func (s *Server) authenticate(r *http.Request) (*auth.Key, string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		// A browser's WebSocket cannot set headers: its key comes as the
		// subprotocol mqgate.key.<base64url> (stream.go).
		if token := keyFromSubprotocol(r); token != "" {
			if k := s.keys.Authenticate(token); k != nil {
				return k, ""
			}
			return nil, "unknown API key"
		}
		return nil, "this API needs an API key: send Authorization: Bearer <key>"
	}
	scheme, token, _ := strings.Cut(h, " ")
	// RFC 9110: the scheme is case-insensitive.
	if !strings.EqualFold(scheme, "Bearer") {
		return nil, "the Authorization header must use the Bearer scheme: Authorization: Bearer <key>"
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, "the Authorization header has no key after Bearer"
	}
	if k := s.keys.Authenticate(token); k != nil {
		return k, ""
	}
	return nil, "unknown API key"
}

// unauthorized answers 401 with the challenge RFC 6750 asks for.
func unauthorized(w http.ResponseWriter, r *http.Request, why string) {
	challenge := `Bearer realm="mqgate"`
	if r.Header.Get("Authorization") != "" {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	sendProblem(w, r, newProblem(codeUnauthorized, why))
}

// forbidden answers 403 naming the key (its name, never its secret).
func forbidden(w http.ResponseWriter, r *http.Request, key *auth.Key, why string) {
	sendProblem(w, r, newProblem(core.EForbidden, "API key "+strconv.Quote(key.Name)+": "+why))
}

// needs says which grant a refused request lacked.
func needs(acc access, name string) string {
	switch acc.kind {
	case auth.Pub:
		return "needs a pub grant matching topic " + strconv.Quote(name) + " (or admin)"
	case auth.Sub:
		return "needs a sub grant matching group " + strconv.Quote(name) + " (or admin)"
	}
	return "needs the admin grant"
}

// routePath is the path chi routes on, taken the way its routeHTTP takes
// it (what a parent router left, else the raw path, else the path).
func routePath(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePath != "" {
		return rc.RoutePath
	}
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	if r.URL.Path != "" {
		return r.URL.Path
	}
	return "/"
}

// unescapeParam percent-decodes a path parameter exactly as pathParam
// does, so the name a grant is checked against is the name the handler
// acts on (ord%65rs is orders for both).
func unescapeParam(v string) string {
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
