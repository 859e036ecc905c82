package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// formatTime renders t in UTC with milliseconds (RFC 3339, as API.md fixes
// for every time); the zero time is "".
func formatTime(t time.Time) string { return wire.FormatTime(t) }

// pathParam returns a URL path parameter, percent-decoded: chi matches
// on the raw path, so %25RETRY%25g arrives still encoded.
func pathParam(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// userTopicParam returns the {topic} of a request that creates, changes or
// publishes: system topics (%RETRY%…, %DLQ%…, SCHEDULE_TOPIC_XXXX) are
// forbidden to clients, other names must match the topic name rule.
func userTopicParam(r *http.Request) (string, error) {
	name := pathParam(r, "topic")
	if core.IsSystemTopic(name) {
		return "", core.Errorf(core.EForbidden, "%q is a system topic; clients cannot create, change or publish to it", name)
	}
	if !core.ValidName(name) {
		return "", core.FieldError("topic", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	return name, nil
}

// readTopicParam returns the {topic} of a read-only request: system topics
// may be inspected, so only their suffix is checked.
func readTopicParam(r *http.Request) (string, error) {
	name := pathParam(r, "topic")
	switch {
	case core.ValidName(name), name == core.ScheduleTopic:
		return name, nil
	case len(name) > len(core.RetryTopicPrefix) && name[:len(core.RetryTopicPrefix)] == core.RetryTopicPrefix &&
		core.ValidName(name[len(core.RetryTopicPrefix):]):
		return name, nil
	case len(name) > len(core.DLQTopicPrefix) && name[:len(core.DLQTopicPrefix)] == core.DLQTopicPrefix &&
		core.ValidName(name[len(core.DLQTopicPrefix):]):
		return name, nil
	}
	return "", core.FieldError("topic", "must match ^[A-Za-z0-9_-]{1,127}$")
}
