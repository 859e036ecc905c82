package engine

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
)

// selector is a compiled core.MessageFilter.
type selector struct {
	tags     core.Filter
	sql      core.Filter
	hasSQL   bool
	reason   string
	from, to time.Time
}

// compile validates f: EInvalid errors name filter.tags, filter.sql (with
// the position), filter.reason or filter.to.
func compileFilter(f core.MessageFilter) (selector, error) {
	var s selector
	var err error
	if s.tags, err = core.ParseFilter(f.Tags); err != nil {
		return s, core.FieldError("filter.tags", "%s", err.(*core.Error).Message)
	}
	if strings.TrimSpace(f.SQL) != "" {
		if s.sql, err = core.ParseSubscriptionFilter(core.FilterSQL92, f.SQL); err != nil {
			return s, core.FieldError("filter.sql", "%s", err.(*core.Error).Message)
		}
		s.hasSQL = true
	}
	if utf8.RuneCountInString(f.Reason) > core.MaxReasonLength {
		return s, core.FieldError("filter.reason", "must be at most %d characters", core.MaxReasonLength)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return s, core.FieldError("filter.to", "must be after from")
	}
	s.reason, s.from, s.to = f.Reason, f.From, f.To
	return s, nil
}

// match reports whether m is selected.
func (s selector) match(m *core.Message) bool {
	if !s.tags.MatchTags(m.Tags) {
		return false
	}
	if s.hasSQL && !s.sql.Match(m) {
		return false
	}
	if s.reason != "" && !strings.Contains(m.SysProps[core.PropLastReason], s.reason) {
		return false
	}
	if !s.from.IsZero() && m.StoredAt.Before(s.from) {
		return false
	}
	if !s.to.IsZero() && !m.StoredAt.Before(s.to) {
		return false
	}
	return true
}
