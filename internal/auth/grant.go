package auth

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Kind is what a grant allows.
type Kind uint8

const (
	// Pub allows publishing to the matching topics and reading their
	// messages (by id, by key, browsing).
	Pub Kind = iota + 1
	// Sub allows consuming through the matching groups: receive, ack,
	// nack, extend, the group's config, offsets and dead letters.
	Sub
	// Admin allows everything, including creating and deleting topics and
	// groups, resetting offsets and redriving dead letters.
	Admin
)

func (k Kind) String() string {
	switch k {
	case Pub:
		return "pub"
	case Sub:
		return "sub"
	case Admin:
		return "admin"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Grant is one entry of a key's "grants": "admin", "pub:<topic pattern>"
// or "sub:<group pattern>".
type Grant struct {
	Kind Kind
	// Pattern is a path.Match pattern over names ('*' any run of
	// characters, '?' one character, '[a-z]' a class); empty for Admin.
	Pattern string
}

func (g Grant) String() string {
	if g.Kind == Admin {
		return "admin"
	}
	return g.Kind.String() + ":" + g.Pattern
}

// ParseGrant reads one grant. Patterns may use the characters of topic and
// group names (A-Z a-z 0-9 _ -) and path.Match's wildcards * ? [ ] ^ !;
// anything else is an error, so a typo never silently grants nothing or
// everything.
func ParseGrant(s string) (Grant, error) {
	if s == "admin" {
		return Grant{Kind: Admin}, nil
	}
	prefix, pattern, ok := strings.Cut(s, ":")
	var g Grant
	switch {
	case ok && prefix == "pub":
		g.Kind = Pub
	case ok && prefix == "sub":
		g.Kind = Sub
	default:
		return Grant{}, errors.New("unknown grant; want \"pub:<topic pattern>\", \"sub:<group pattern>\" or \"admin\"")
	}
	if pattern == "" {
		return Grant{}, fmt.Errorf("%s: the pattern is empty (use %s:* for every name)", prefix, prefix)
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		case c == '*', c == '?', c == '[', c == ']', c == '^', c == '!':
		default:
			return Grant{}, fmt.Errorf("%s: pattern %q: character %q is neither a name character nor a wildcard", prefix, pattern, c)
		}
	}
	// path.Match reports a malformed pattern only when it gets that far
	// into the name; matching against a name that exercises every part
	// finds ErrBadPattern up front.
	if _, err := path.Match(pattern, strings.Repeat("x", len(pattern))); err != nil {
		return Grant{}, fmt.Errorf("%s: pattern %q: %w", prefix, pattern, err)
	}
	g.Pattern = pattern
	return g, nil
}

// allows reports whether g covers kind on name.
func (g Grant) allows(kind Kind, name string) bool {
	if g.Kind == Admin {
		return true
	}
	if g.Kind != kind {
		return false
	}
	ok, err := path.Match(g.Pattern, name)
	return err == nil && ok
}
