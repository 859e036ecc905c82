package core

import (
	"errors"
	"strings"

	"github.com/mqgate/mqgate/core/sqlfilter"
)

// Filter types of a subscription (RocketMQ ExpressionType).
const (
	FilterTag   = "TAG"   // tags joined by || (the default; stored as "")
	FilterSQL92 = "SQL92" // a SQL92 expression over properties (core/sqlfilter)
)

// PropTags is the name a SQL92 filter reads the message's tag under
// (RocketMQ MessageConst.PROPERTY_TAGS).
const PropTags = "TAGS"

// ParseSubscriptionFilter parses a subscription's filter of type typ
// ("" or TAG: ParseFilter; SQL92: a sqlfilter expression). A bad
// expression is an EInvalid error whose message names the position
// ("at 14: expected a value").
func ParseSubscriptionFilter(typ, expr string) (Filter, error) {
	switch strings.ToUpper(typ) {
	case "", FilterTag:
		return ParseFilter(expr)
	case FilterSQL92:
		e, err := sqlfilter.Parse(expr)
		if err != nil {
			var se *sqlfilter.SyntaxError
			if errors.As(err, &se) {
				return Filter{}, FieldError("filter", "%s", se.Error())
			}
			return Filter{}, FieldError("filter", "%s", err.Error())
		}
		return Filter{Expr: e.String(), Type: FilterSQL92, sql: e}, nil
	}
	return Filter{}, FieldError("filterType", "must be TAG or SQL92")
}

// ParseSubscription parses s's filter (ParseSubscriptionFilter).
func ParseSubscription(s Subscription) (Filter, error) {
	return ParseSubscriptionFilter(s.FilterType, s.Filter)
}

// SQL reports whether f is a SQL92 filter.
func (f Filter) SQL() bool { return f.sql != nil }

// Same reports whether f and g filter alike (same type and expression).
func (f Filter) Same(g Filter) bool { return f.Expr == g.Expr && f.SQL() == g.SQL() }

// Match is the full check on a stored message: its tag for a tag filter,
// the expression over its user properties and TAGS (always the tag; a
// message without one has TAGS NULL) for a SQL92 one.
func (f Filter) Match(m *Message) bool {
	if f.sql == nil {
		return f.MatchTags(m.Tags)
	}
	return f.sql.Match(func(name string) (string, bool) {
		if name == PropTags {
			return m.Tags, m.Tags != ""
		}
		v, ok := m.Properties[name]
		return v, ok
	})
}
