package core

import (
	"strings"

	"github.com/mqgate/mqgate/core/sqlfilter"
)

// Filter is a parsed subscription expression: `*` (or empty) matches every
// message, `TagA || TagB` matches those tags (RocketMQ SubscriptionData).
type Filter struct {
	Expr string
	// Type is FilterTag (also "") or FilterSQL92 (filter_sql.go).
	Type  string
	all   bool
	tags  map[string]struct{}
	codes map[int32]struct{}
	sql   *sqlfilter.Expr // SQL92 only
}

// ParseFilter parses a tag expression.
func ParseFilter(expr string) (Filter, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return Filter{Expr: "*", all: true}, nil
	}
	f := Filter{Expr: expr, tags: map[string]struct{}{}, codes: map[int32]struct{}{}}
	for _, part := range strings.Split(expr, "||") {
		tag := strings.TrimSpace(part)
		if tag == "" {
			return Filter{}, FieldError("filter", "empty tag in expression %q", expr)
		}
		if tag == "*" {
			return Filter{Expr: "*", all: true}, nil
		}
		f.tags[tag] = struct{}{}
		f.codes[TagsCode(tag)] = struct{}{}
	}
	return f, nil
}

// MatchAll is the filter `*`.
var MatchAll = Filter{Expr: "*", all: true}

// All reports whether the filter matches everything.
func (f Filter) All() bool { return f.sql == nil && (f.all || (f.tags == nil && f.Expr == "")) }

// MatchCode is the consume-queue check on the tags hash code; it may pass
// messages whose tag merely collides (MatchTags settles it).
func (f Filter) MatchCode(code int32) bool {
	if f.All() || f.sql != nil {
		return true
	}
	_, ok := f.codes[code]
	return ok
}

// MatchTags is the exact check on the message's tag (a SQL92 filter
// passes every tag: Match settles it).
func (f Filter) MatchTags(tags string) bool {
	if f.All() || f.sql != nil {
		return true
	}
	_, ok := f.tags[tags]
	return ok
}

// TagsCode is the consume-queue tags hash code of a tag (Java's
// String.hashCode, as RocketMQ uses). The empty tag hashes to 0.
func TagsCode(tags string) int32 {
	var h int32
	for _, r := range tags {
		// Java hashes UTF-16 code units; runes outside the BMP are split.
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
