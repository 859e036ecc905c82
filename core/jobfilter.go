package core

import (
	"strings"
	"time"
	"unicode/utf8"
)

// JobSelector is a compiled MessageFilter: what a filter job (either
// backend's) selects.
type JobSelector struct {
	tags     Filter
	sql      Filter
	hasSQL   bool
	reason   string
	from, to time.Time
}

// Compile validates f: EInvalid errors name filter.tags, filter.sql (with
// the position), filter.reason or filter.to.
func (f MessageFilter) Compile() (JobSelector, error) {
	var s JobSelector
	var err error
	if s.tags, err = ParseFilter(f.Tags); err != nil {
		return s, FieldError("filter.tags", "%s", err.(*Error).Message)
	}
	if strings.TrimSpace(f.SQL) != "" {
		if s.sql, err = ParseSubscriptionFilter(FilterSQL92, f.SQL); err != nil {
			return s, FieldError("filter.sql", "%s", err.(*Error).Message)
		}
		s.hasSQL = true
	}
	if utf8.RuneCountInString(f.Reason) > MaxReasonLength {
		return s, FieldError("filter.reason", "must be at most %d characters", MaxReasonLength)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return s, FieldError("filter.to", "must be after from")
	}
	s.reason, s.from, s.to = f.Reason, f.From, f.To
	return s, nil
}

// Match reports whether m is selected.
func (s JobSelector) Match(m *Message) bool {
	if !s.tags.MatchTags(m.Tags) {
		return false
	}
	if s.hasSQL && !s.sql.Match(m) {
		return false
	}
	if s.reason != "" && !strings.Contains(m.SysProps[PropLastReason], s.reason) {
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

// ValidJobKind refuses a job kind other than JobDLQRedrive, JobDLQPurge
// and JobTopicPurge.
func ValidJobKind(kind string) error {
	switch kind {
	case JobDLQRedrive, JobDLQPurge, JobTopicPurge:
		return nil
	}
	return Errorf(EInvalid, "unknown job kind %q", kind)
}
