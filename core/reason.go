package core

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// PropLastReason is the system property holding why the last delivery of
// a message failed (a nack's reason, a webhook's status or error, a lease
// or consume timeout): set on the retry copy and the dead-letter copy,
// shown as lastReason.
const PropLastReason = "LAST_REASON"

// ClipReason makes a reason fit for storing: valid UTF-8, control
// characters as spaces, trimmed and cut to MaxReasonLength characters.
func ClipReason(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > MaxReasonLength {
		s = string([]rune(s)[:MaxReasonLength-1]) + "…"
	}
	return s
}
