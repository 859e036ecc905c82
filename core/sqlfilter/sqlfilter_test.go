package sqlfilter

import (
	"errors"
	"strings"
	"testing"
)

// props builds a Lookup over a map; TAGS is an ordinary key here.
func props(m map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// The messages of the table.
var (
	msgEU    = map[string]string{"a": "10", "region": "eu", "b": "x", "TAGS": "created", "flag": "true", "price": "9.5"}
	msgUS    = map[string]string{"a": "3", "region": "us", "TAGS": "paid", "flag": "FALSE", "price": "12"}
	msgEmpty = map[string]string{}
	msgText  = map[string]string{"a": "ten", "region": "5", "flag": "yes", "price": "1e3"}
)

func TestMatchTable(t *testing.T) {
	msgs := []struct {
		name string
		p    map[string]string
	}{{"eu", msgEU}, {"us", msgUS}, {"empty", msgEmpty}, {"text", msgText}}
	// want: one letter per message above: T (match) or f (no match).
	cases := []struct {
		expr string
		want string
	}{
		{"a > 5 AND region IN ('eu','us') AND b IS NOT NULL", "Tfff"},
		{"a > 5", "Tfff"},        // missing: unknown; 'ten': mismatch
		{"a <= 5", "fTff"},       // same
		{"NOT (a > 5)", "fTfT"},  // unknown stays unknown; a mismatch is FALSE, so NOT is TRUE
		{"a = 10", "Tfff"},       // property read as a number
		{"a = '10'", "Tfff"},     // as a string
		{"a = 10.0", "Tfff"},     // integer vs decimal
		{"a <> 10", "fTfT"},      // missing: unknown
		{"price > 9.25", "TTfT"}, // '1e3' is a number
		{"price BETWEEN 9 AND 12", "TTff"},
		{"price NOT BETWEEN 9 AND 12", "fffT"},
		{"a BETWEEN -1 AND +3", "fTff"},
		{"region IN ('eu')", "Tfff"},
		{"region NOT IN ('eu')", "fTfT"},
		{"region IN (5, 'x')", "fffT"}, // '5' equals the number 5
		{"region = 5", "fffT"},
		{"b IS NULL", "fTTT"},
		{"b IS NOT NULL", "Tfff"},
		{"TAGS = 'created' OR TAGS = 'paid'", "TTff"},
		{"TAGS IS NULL", "ffTT"},
		{"flag", "Tfff"},         // bare property: "true" any case
		{"flag = TRUE", "Tfff"},  // 'yes' is not a boolean: false
		{"flag = FALSE", "fTff"}, // 'FALSE' any case
		{"NOT flag", "fTfT"},     // 'yes' reads FALSE; missing is unknown
		{"TRUE", "TTTT"},         // a constant
		{"FALSE OR a IS NULL", "ffTf"},
		{"b = 'x' OR a > 5", "Tfff"},          // unknown OR false = unknown
		{"b = 'x' OR a IS NULL", "TfTf"},      // unknown OR true = true
		{"a > 100 AND b = 'x'", "ffff"},       // false AND unknown = false
		{"NOT (a > 100 AND b = 'x')", "TTfT"}, // the empty message: unknown AND unknown
		{"NOT (b = 'y')", "Tfff"},             // NOT unknown = unknown
		{"a = region", "ffff"},                // property vs property: strings
		{"region < a", "fffff"[:4]},           // 'eu' is not a number: false
		{"'eu' = 'eu'", "TTTT"},
		{"1 = '1'", "ffff"}, // literal types differ: never equal
		{"1 < 2.5", "TTTT"},
		{"a >= 10 and REGION = 'eu'", "ffff"}, // keywords any case, names exact
		{"((a > 5))", "Tfff"},
		{"a>5AND b IS NOT NULL", ""}, // not a valid expression: checked below
	}
	for _, tc := range cases {
		if tc.want == "" {
			continue
		}
		e, err := Parse(tc.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		for i, m := range msgs {
			want := tc.want[i] == 'T'
			if got := e.Match(props(m.p)); got != want {
				t.Errorf("%q on %s: got %v (%s), want %v", tc.expr, m.name, got, e.Eval(props(m.p)), want)
			}
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr string
		pos  int
		msg  string // a substring of the message
	}{
		{"", 1, "empty"},
		{"a > 5 AND b = ", 15, "expected a value"},
		{"a > 5 AND", 10, "expected a value"},
		{"a >", 4, "expected a value"},
		{"a > 'x'", 5, "expected a number"},
		{"'x' < 3", 1, "expected a number"},
		{"a BETWEEN 'a' AND 3", 11, "expected a number"},
		{"a BETWEEN 1 OR 3", 13, "expected AND"},
		{"a = NULL", 5, "only written after IS"},
		{"a IS 5", 6, "expected NULL"},
		{"a IN 'x'", 6, "expected '('"},
		{"a IN ('x' 'y')", 11, "expected ',' or ')'"},
		{"a IN (b)", 7, "string or number"},
		{"a IN ()", 7, "expected a value"},
		{"a NOT LIKE 'x'", 7, "BETWEEN or IN"},
		{"(a > 5", 7, "expected ')'"},
		{"a > 5)", 6, "unexpected"},
		{"a 5", 3, "expected AND, OR or the end"},
		{"5", 2, "expected a comparison"},
		{"'x'", 4, "expected a comparison"},
		{"a == 5", 4, "expected a value"},
		{"a != 5", 3, "unexpected '!'"},
		{"a = 'open", 5, "unterminated"},
		{"a = 99999999999999999999", 5, "out of range"},
		{"a = 1e", 7, "exponent"},
		{"a = 12abc", 7, "after a number"},
		{"a > - 'x'", 7, "expected a number after -"},
		{"région = 1", 2, "unexpected 'é'"},
		{"a = 1 AND é", 11, "unexpected 'é'"},
		{"a AND OR b", 7, "expected a value"},
		{strings.Repeat("NOT ", MaxDepth+1) + "a", 4*MaxDepth + 1, "nested deeper"},
		{strings.Repeat("(", MaxDepth+1) + "a" + strings.Repeat(")", MaxDepth+1), MaxDepth + 1, "nested deeper"},
		{"a = '" + strings.Repeat("x", MaxLength) + "'", MaxLength + 1, "longer than"},
	}
	for _, tc := range cases {
		_, err := Parse(tc.expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%.40q): err = %v, want a SyntaxError", tc.expr, err)
			continue
		}
		if se.Pos != tc.pos || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Parse(%.40q) = %q, want at %d: …%s…", tc.expr, se.Error(), tc.pos, tc.msg)
		}
	}
}

func TestStringKeepsSource(t *testing.T) {
	e, err := Parse("  a IN ('it''s')  ")
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != "a IN ('it''s')" {
		t.Fatalf("String() = %q", e.String())
	}
	if !e.Match(props(map[string]string{"a": "it's"})) {
		t.Fatal("'' is a quote inside a string")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a > 5 AND region IN ('eu','us') AND b IS NOT NULL",
		"NOT (a BETWEEN -1.5e3 AND 2) OR TAGS = 'x'",
		"flag", "a = 'it''s'", "(((a)))", "a <> b", "a NOT IN (1, 'x')",
	} {
		f.Add(s, "10")
	}
	f.Fuzz(func(t *testing.T, src, val string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 1 {
				t.Fatalf("Parse(%q): %v is not a positioned SyntaxError", src, err)
			}
			return
		}
		// Evaluation never panics, and a parsed expression parses again
		// from its String.
		for _, p := range []map[string]string{{}, {"a": val, "b": val, "TAGS": val, "flag": val, "region": val}} {
			got := e.Eval(props(p))
			if got != True && got != False && got != Unknown {
				t.Fatalf("Eval = %d", got)
			}
		}
		if _, err := Parse(e.String()); err != nil {
			t.Fatalf("re-parse of %q: %v", e.String(), err)
		}
	})
}
