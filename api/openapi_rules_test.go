package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/openapi"
)

// The committed OpenAPI document must say every rule the server enforces.
// These tests read the document as plain JSON (not through openapi/gen's
// code) and check it against the Go types: each validate tag rule has its
// schema keyword, every request schema refuses unknown members, the
// exactly-one / at-most-one groups are there, responses list what is
// always sent, and every operation declares the statuses it can answer.

type jsonSchema = map[string]any

func loadDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func schemaNamed(t *testing.T, doc map[string]any, name string) jsonSchema {
	t.Helper()
	s, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("no schema %s in openapi.json", name)
	}
	return s
}

// resolve follows a $ref or a one-element allOf wrapper (nullable refs).
func resolve(doc map[string]any, s jsonSchema) jsonSchema {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		return doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	}
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 && s["properties"] == nil {
		return resolve(doc, all[0].(map[string]any))
	}
	return s
}

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// wantKeyword fails unless s[key] equals want.
func wantKeyword(t *testing.T, where string, s jsonSchema, key string, want any) {
	t.Helper()
	got, ok := s[key]
	if !ok {
		t.Errorf("%s: no %s (want %v)", where, key, want)
		return
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: %s is %v, want %v", where, key, got, want)
	}
}

func TestOpenAPIRequestSchemasMatchValidateTags(t *testing.T) {
	doc := loadDoc(t)
	for _, v := range RequestBodies {
		typ := reflect.TypeOf(v)
		s := schemaNamed(t, doc, typ.Name())
		if ap, ok := s["additionalProperties"].(bool); !ok || ap {
			t.Errorf("%s: additionalProperties must be false (the decoder refuses unknown members)", typ.Name())
		}
		props, _ := s["properties"].(map[string]any)
		var required []string
		for _, f := range reflect.VisibleFields(typ) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || f.Anonymous {
				continue
			}
			where := typ.Name() + "." + name
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s: not in the document", where)
				continue
			}
			nullable, _ := p["nullable"].(bool)
			if want := f.Type.Kind() == reflect.Pointer && !strings.Contains(opts, "omitempty"); nullable != want {
				t.Errorf("%s: nullable %v, want %v (the decoder accepts null exactly there)", where, nullable, want)
			}
			tag := f.Tag.Get("validate")
			own, elem, dive := strings.Cut(tag, ",dive")
			if slices.Contains(strings.Split(own, ","), "required") {
				required = append(required, name)
			}
			checkRules(t, doc, where, p, f.Type, own)
			if dive {
				elemT := f.Type
				for elemT.Kind() == reflect.Pointer {
					elemT = elemT.Elem()
				}
				rules := strings.TrimPrefix(elem, ",")
				if elemT.Kind() == reflect.Map {
					if _, after, ok := strings.Cut(rules, "endkeys"); ok {
						rules = strings.TrimPrefix(after, ",")
					}
					checkRules(t, doc, where+"{}", p["additionalProperties"].(map[string]any), elemT.Elem(), rules)
				} else {
					checkRules(t, doc, where+"[]", resolve(doc, p["items"].(map[string]any)), elemT.Elem(), rules)
				}
			}
		}
		var got []string
		for _, r := range asSlice(s["required"]) {
			got = append(got, r.(string))
		}
		slices.Sort(got)
		slices.Sort(required)
		if !slices.Equal(got, required) {
			t.Errorf("%s: required %v, the validate tags require %v", typ.Name(), got, required)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// checkRules checks one validate tag's rules (before dive) against the
// property schema p of a member of Go type typ.
func checkRules(t *testing.T, doc map[string]any, where string, p jsonSchema, typ reflect.Type, tag string) {
	t.Helper()
	pointer := typ.Kind() == reflect.Pointer
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	rules := strings.Split(tag, ",")
	omitempty := slices.Contains(rules, "omitempty")
	for _, r := range rules {
		name, param, _ := strings.Cut(r, "=")
		n, _ := strconv.ParseFloat(param, 64)
		switch name {
		case "", "omitempty":
		case "required":
			if typ.Kind() == reflect.String && where[len(where)-1] == ']' {
				if v, _ := num(p["minLength"]); v < 1 {
					t.Errorf("%s: required element without minLength ≥ 1", where)
				}
			}
		case "min", "max":
			key := map[reflect.Kind]string{reflect.String: "Length", reflect.Slice: "Items", reflect.Map: "Properties"}[typ.Kind()]
			switch {
			case key != "":
				wantKeyword(t, where, p, name+key, n)
			case name == "max":
				wantKeyword(t, where, p, "maximum", n)
			case omitempty && !pointer && n == 1:
				wantKeyword(t, where, p, "minimum", 0) // 0 is "absent"
			default:
				wantKeyword(t, where, p, "minimum", n)
			}
		case "oneof":
			wantKeyword(t, where, p, "enum", fmt.Sprint(asAny(strings.Fields(param))))
		case "excludes":
			not, _ := p["not"].(map[string]any)
			if not == nil || not["pattern"] == nil {
				t.Errorf("%s: excludes=%s has no not/pattern", where, param)
			}
		default:
			pat, ok := PatternTags[name]
			if !ok {
				t.Errorf("%s: validate rule %q has no known OpenAPI form", where, r)
				continue
			}
			wantKeyword(t, where, p, "pattern", pat)
		}
	}
}

func asAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestOpenAPIResponseSchemasListWhatIsSent(t *testing.T) {
	doc := loadDoc(t)
	for _, v := range ResponseBodies {
		typ := reflect.TypeOf(v)
		s := schemaNamed(t, doc, typ.Name())
		props, _ := s["properties"].(map[string]any)
		var want []string
		for _, f := range reflect.VisibleFields(typ) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || f.Anonymous {
				continue
			}
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: not in the document", typ.Name(), name)
				continue
			}
			if !strings.Contains(opts, "omitempty") {
				want = append(want, name)
			}
			nullable, _ := p["nullable"].(bool)
			if w := f.Type.Kind() == reflect.Pointer && !strings.Contains(opts, "omitempty"); nullable != w {
				t.Errorf("%s.%s: nullable %v, want %v", typ.Name(), name, nullable, w)
			}
			if enums := f.Tag.Get("enums"); enums != "" {
				wantKeyword(t, typ.Name()+"."+name, resolve(doc, p), "enum", fmt.Sprint(asAny(strings.Split(enums, ","))))
			}
		}
		var got []string
		for _, r := range asSlice(s["required"]) {
			got = append(got, r.(string))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: required %v, the server always sends %v", typ.Name(), got, want)
		}
	}
}

// TestOpenAPIFieldGroups checks the exactly-one / at-most-one groups are
// in the document and that the handler's checks enforce them.
func TestOpenAPIFieldGroups(t *testing.T) {
	doc := loadDoc(t)
	s := New(Options{})
	for _, g := range FieldGroups {
		sch := schemaNamed(t, doc, g.Type)
		raw, _ := json.Marshal(sch["allOf"])
		if len(g.ExactlyOne) > 0 {
			var parts []string
			for _, n := range g.ExactlyOne {
				parts = append(parts, `{"required":["`+n+`"]}`)
			}
			if want := `{"oneOf":[` + strings.Join(parts, ",") + `]}`; !strings.Contains(string(raw), want) {
				t.Errorf("%s: allOf %s lacks %s", g.Type, raw, want)
			}
		}
		for i, a := range g.AtMostOne {
			for _, b := range g.AtMostOne[i+1:] {
				if want := `{"required":["` + a + `","` + b + `"]}`; !strings.Contains(string(raw), want) {
					t.Errorf("%s: allOf %s lacks not %s", g.Type, raw, want)
				}
				// And the server refuses the pair.
				body := fmt.Sprintf(`{"body":"x",%q:%s,%q:%s}`, a, sample(a), b, sample(b))
				if got := publishErrors(t, s, body); !strings.Contains(got, "at most one") {
					t.Errorf("%s with %s and %s: %q, want an at-most-one error", g.Type, a, b, got)
				}
			}
		}
		if len(g.ExactlyOne) == 2 {
			both := fmt.Sprintf(`{%q:"eA==",%q:"eA=="}`, g.ExactlyOne[0], g.ExactlyOne[1])
			if got := publishErrors(t, s, both); !strings.Contains(got, "exactly one") {
				t.Errorf("both %v: %q, want an exactly-one error", g.ExactlyOne, got)
			}
			if got := publishErrors(t, s, `{}`); !strings.Contains(got, "exactly one") {
				t.Errorf("none of %v: %q, want an exactly-one error", g.ExactlyOne, got)
			}
		}
	}
}

// TestOpenAPIEmptyBody: the handler refuses an empty text body (not a
// validate tag, see PublishRequest.Body) and the document says minLength 1.
func TestOpenAPIEmptyBody(t *testing.T) {
	doc := loadDoc(t)
	p := schemaNamed(t, doc, "PublishRequest")["properties"].(map[string]any)["body"].(map[string]any)
	wantKeyword(t, "PublishRequest.body", p, "minLength", 1)
	if got := publishErrors(t, New(Options{}), `{"body":""}`); !strings.Contains(got, "must not be empty") {
		t.Fatalf(`{"body":""}: %q`, got)
	}
}

func sample(field string) string {
	if field == "deliverAt" {
		return `"2030-01-02T15:04:05Z"`
	}
	return "3"
}

// publishErrors runs body through the publish decoder and checks and
// returns the field messages, joined.
func publishErrors(t *testing.T, s *Server, body string) string {
	t.Helper()
	var req PublishRequest
	if err := decodePublish(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), maxPublishJSON, &req); err != nil {
		return err.Error()
	}
	var fe fieldErrors
	s.checkStruct(&req, &fe)
	toPutMessage(&req, -1, timeNow(), &fe)
	var msgs []string
	for _, f := range fe {
		msgs = append(msgs, f.Message)
	}
	return strings.Join(msgs, "; ")
}

// TestOpenAPIOperations checks security and statuses of every operation:
// /v1 takes an optional bearer key (and can answer 401, 403, 503), every
// operation can answer 500, every body 400, 408, 413 and 415; 429 and
// 503 carry Retry-After; path parameters have their patterns.
func TestOpenAPIOperations(t *testing.T) {
	doc := loadDoc(t)
	paths := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			where := strings.ToUpper(method) + " " + path
			responses := op["responses"].(map[string]any)
			need := []string{"500"}
			sec, _ := json.Marshal(op["security"])
			if strings.HasPrefix(path, "/v1/") {
				need = append(need, "401", "403", "503")
				if string(sec) != `[{"BearerAuth":[]},{}]` {
					t.Errorf("%s: security %s, want optional bearer", where, sec)
				}
			} else if string(sec) != `[]` {
				t.Errorf("%s: security %s, want none", where, sec)
			}
			if op["requestBody"] != nil {
				need = append(need, "400", "408", "413", "415")
			}
			for _, code := range need {
				if responses[code] == nil {
					t.Errorf("%s: no %s response", where, code)
				}
			}
			for code, r := range responses {
				if code == "429" || code == "503" {
					h, _ := r.(map[string]any)["headers"].(map[string]any)
					if h["Retry-After"] == nil {
						t.Errorf("%s: %s without Retry-After", where, code)
					}
				}
			}
			for _, p := range asSlice(op["parameters"]) {
				pm := p.(map[string]any)
				if pm["in"] != "path" {
					continue
				}
				want := PathParamPattern(strings.ToUpper(method), pm["name"].(string))
				got, _ := pm["schema"].(map[string]any)["pattern"].(string)
				if got != want {
					t.Errorf("%s: {%s} pattern %q, want %q", where, pm["name"], got, want)
				}
			}
		}
	}
	if servers := asSlice(doc["servers"]); len(servers) == 0 {
		t.Error("no servers entry")
	}
}

// TestPatternTagsMatchServer checks each documented pattern against the
// server's own check on a few names, so the two cannot drift.
func TestPatternTagsMatchServer(t *testing.T) {
	for _, c := range []struct {
		s    string
		name bool
	}{{"orders", true}, {"a-b_C9", true}, {"", false}, {"bad.name", false}, {strings.Repeat("x", 127), true}, {strings.Repeat("x", 128), false}, {"%RETRY%g", false}} {
		if got := regexp.MustCompile(NamePattern).MatchString(c.s); got != c.name {
			t.Errorf("NamePattern on %q: %v, want %v", c.s, got, c.name)
		}
	}
	re := regexp.MustCompile(PatternTags["base64"])
	for _, s := range []string{"", "AA==", "AAA=", "AAAA", "A===", "=AAA", "AA=A", "AAECAw==", "a+/9", "a-_9", "AAAAA"} {
		if re.MatchString(s) != isStdBase64(s) {
			t.Errorf("base64 %q: pattern %v, server %v", s, re.MatchString(s), isStdBase64(s))
		}
	}
}

func timeNow() time.Time { return time.Now() }
