package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TagsCode must equal Java's String.hashCode, which RocketMQ stores in the
// consume queue; values computed by hand from h = 31*h + UTF-16 unit.
func TestTagsCodeIsJavaHashCode(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		want int32
	}{
		{"", 0},
		{"A", 65},
		{"TagA", 2598919},
		{"\U0001F600", 1772899}, // one rune, two UTF-16 units (D83D DE00)
		{"created-order-payment-failed", javaHash("created-order-payment-failed")},
	} {
		if got := TagsCode(tc.tag); got != tc.want {
			t.Errorf("TagsCode(%q) = %d, want %d", tc.tag, got, tc.want)
		}
	}
}

// javaHash is the textbook definition over bytes, valid for ASCII only.
func javaHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		all     bool
		match   []string
		nomatch []string
		bad     bool
	}{
		{expr: "", all: true, match: []string{"", "x"}},
		{expr: " * ", all: true, match: []string{"a"}},
		{expr: "TagA", match: []string{"TagA"}, nomatch: []string{"TagB", "", "taga"}},
		{expr: "TagA || TagB", match: []string{"TagA", "TagB"}, nomatch: []string{"TagC", "TagA || TagB"}},
		{expr: "a||*", all: true, match: []string{"z"}},
		{expr: "a || ", bad: true},
		{expr: "||", bad: true},
	} {
		f, err := ParseFilter(tc.expr)
		if tc.bad {
			if err == nil || ErrorCode(err) != EInvalid {
				t.Errorf("ParseFilter(%q): err = %v, want an EInvalid error", tc.expr, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseFilter(%q): %v", tc.expr, err)
		}
		if f.All() != tc.all {
			t.Errorf("ParseFilter(%q).All() = %v", tc.expr, f.All())
		}
		for _, tag := range tc.match {
			if !f.MatchCode(TagsCode(tag)) || !f.MatchTags(tag) {
				t.Errorf("%q should match %q", tc.expr, tag)
			}
		}
		for _, tag := range tc.nomatch {
			if f.MatchTags(tag) {
				t.Errorf("%q should not match %q", tc.expr, tag)
			}
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"*", "a || b", "||", " x ", "a||*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := ParseFilter(expr)
		if err != nil {
			return
		}
		if flt.All() {
			return
		}
		// Every tag the expression names matches, by code and exactly.
		for tag := range flt.tags {
			if !flt.MatchCode(TagsCode(tag)) || !flt.MatchTags(tag) {
				t.Fatalf("%q does not match its own tag %q", expr, tag)
			}
		}
	})
}

func TestErrorCode(t *testing.T) {
	if ErrorCode(nil) != "" {
		t.Fatal("nil error has a code")
	}
	if got := ErrorCode(fmt.Errorf("wrapped: %w", Errorf(ENotFound, "topic %q", "x"))); got != ENotFound {
		t.Fatalf("wrapped domain error: %q", got)
	}
	if got := ErrorCode(errors.New("disk on fire")); got != EInternal {
		t.Fatalf("plain error: %q", got)
	}
	if e := FieldError("maxMessages", "must be ≤ %d", 32); e.Field != "maxMessages" || e.Code != EInvalid {
		t.Fatalf("FieldError: %+v", e)
	}
}

func TestUserIDAndTopicOfRetries(t *testing.T) {
	m := &Message{ID: "retry-copy", Topic: RetryTopic("g"), SysProps: map[string]string{
		PropOriginMessageID: "orig", PropRetryTopic: "orders",
	}}
	if m.UserID() != "orig" || m.UserTopic() != "orders" {
		t.Fatalf("retry copy shows %q on %q", m.UserID(), m.UserTopic())
	}
	plain := &Message{ID: "id1", Topic: "orders"}
	if plain.UserID() != "id1" || plain.UserTopic() != "orders" {
		t.Fatalf("plain message shows %q on %q", plain.UserID(), plain.UserTopic())
	}
	if !IsSystemTopic(DLQTopic("g")) || !IsSystemTopic(ScheduleTopic) || IsSystemTopic("orders") {
		t.Fatal("IsSystemTopic")
	}
	if !ValidName("a-b_C9") || ValidName("%RETRY%g") || ValidName("") {
		t.Fatal("ValidName")
	}
}

// TestValidNameIsNamePattern: the loop in ValidName accepts exactly what
// NamePattern (the document's rule) matches, on the edges and on random
// strings over an alphabet of allowed, forbidden and multi-byte runes.
func TestValidNameIsNamePattern(t *testing.T) {
	re := regexp.MustCompile(NamePattern)
	cases := []string{"", "a", "-", "_", "a.b", "a b", "é", "%RETRY%g", "a\n", strings.Repeat("a", MaxNameLen),
		strings.Repeat("a", MaxNameLen+1), strings.Repeat("é", 60)}
	alphabet := []rune("aZ09_-.%/ é\x00")
	rng := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		n := rng.IntN(MaxNameLen + 3)
		b := make([]rune, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(4) > 0 {
				b[i] = alphabet[rng.IntN(6)] // mostly allowed runes, so long valid names occur
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if ValidName(s) != re.MatchString(s) {
			t.Fatalf("ValidName(%q) = %v, NamePattern says %v", s, ValidName(s), re.MatchString(s))
		}
	}
}
