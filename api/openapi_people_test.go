package api

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/openapi"
)

// The OpenAPI document written for people (issue 24).

type peopleDoc struct {
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

func loadPeopleDoc(t *testing.T) peopleDoc {
	t.Helper()
	var doc peopleDoc
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPITags: every operation's tag is a top-level tag with a
// description, so /docs shows a sentence under each section heading (not
// "null").
func TestOpenAPITags(t *testing.T) {
	doc := loadPeopleDoc(t)
	described := map[string]bool{}
	for _, tg := range doc.Tags {
		if strings.TrimSpace(tg.Description) == "" {
			t.Errorf("tag %q has no description", tg.Name)
		}
		described[tg.Name] = true
	}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op struct{ Tags []string }
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			for _, tg := range op.Tags {
				if !described[tg] {
					t.Errorf("%s %s: tag %q is not a described top-level tag", method, path, tg)
				}
			}
		}
	}
	for _, p := range []string{"/metrics", "/console"} {
		if _, ok := doc.Paths[p]["get"]; !ok {
			t.Errorf("GET %s is not in the document", p)
		}
	}
}

// TestOpenAPIDescriptionsInUserTerms: no schema or member description
// opens with, or names, a Go identifier of the API's types that is not
// also the JSON name ("DeduplicationID makes…", "Body is…").
func TestOpenAPIDescriptionsInUserTerms(t *testing.T) {
	doc := loadPeopleDoc(t)
	// Go names in CamelCase (two capitals or more: DeduplicationID,
	// LastErrorAt) may appear nowhere; any member's own Go name may not
	// open its description (checked below).
	goNames := map[string]bool{}
	camel := regexp.MustCompile(`^[A-Z][a-z0-9]*[A-Z]`)
	types := append(append([]any{}, RequestBodies...), ResponseBodies...)
	for _, v := range types {
		typ := reflect.TypeOf(v)
		goNames[typ.Name()] = camel.MatchString(typ.Name())
		for _, f := range reflect.VisibleFields(typ) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && name != f.Name && camel.MatchString(f.Name) {
				goNames[f.Name] = true
			}
		}
	}
	for _, v := range types {
		typ := reflect.TypeOf(v)
		var s struct {
			Description string
			Properties  map[string]struct {
				Description string
				AllOf       []struct{ Description string }
			}
		}
		_ = json.Unmarshal(doc.Components.Schemas[typ.Name()], &s)
		if strings.HasPrefix(s.Description, typ.Name()+" ") {
			t.Errorf("%s: description opens with the Go name: %q", typ.Name(), s.Description)
		}
		for _, f := range reflect.VisibleFields(typ) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := s.Properties[name]
			d := p.Description
			for _, a := range p.AllOf {
				d += a.Description
			}
			if first, _, _ := strings.Cut(d, " "); first == f.Name || first == f.Name+":" {
				t.Errorf("%s.%s: description opens with the Go name: %q", typ.Name(), name, d)
			}
		}
	}
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	var check func(where string, v any)
	check = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if d, ok := e.(string); ok && k == "description" {
					for _, w := range word.FindAllString(d, -1) {
						if goNames[w] {
							t.Errorf("%s: description names the Go identifier %q: %q", where, w, d)
						}
					}
					continue
				}
				check(where+"."+k, e)
			}
		case []any:
			for _, e := range x {
				check(where, e)
			}
		}
	}
	for name, raw := range doc.Components.Schemas {
		var v any
		_ = json.Unmarshal(raw, &v)
		check(name, v)
	}
}

// TestOpenAPISinglePublishSchema: the single publish body has no
// deduplicationId (the endpoint answers 400 to it); batch entries do.
func TestOpenAPISinglePublishSchema(t *testing.T) {
	doc := loadPeopleDoc(t)
	var op struct {
		RequestBody struct {
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	if err := json.Unmarshal(doc.Paths["/v1/topics/{topic}/messages"]["post"], &op); err != nil {
		t.Fatal(err)
	}
	ref := op.RequestBody.Content["application/json"].Schema.Ref
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	props := func(name string) map[string]any {
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		_ = json.Unmarshal(doc.Components.Schemas[name], &s)
		return s.Properties
	}
	if p := props(name); p == nil || p["deduplicationId"] != nil || p["body"] == nil {
		t.Fatalf("single publish schema %q: members %v", name, p)
	}
	if props("PublishRequest")["deduplicationId"] == nil {
		t.Fatal("batch entries lost deduplicationId")
	}
}

// TestOpenAPIAnswersRequired: every schema an answer (2xx) uses is built
// from a Go type in ResponseBodies (or RequestBodies, echoed back), so its
// required list says what the server always sends: a strict client's
// types then need no undefined checks (the DLQ answer did).
func TestOpenAPIAnswersRequired(t *testing.T) {
	doc := loadPeopleDoc(t)
	known := map[string]bool{}
	for _, v := range append(append([]any{}, RequestBodies...), ResponseBodies...) {
		known[reflect.TypeOf(v).Name()] = true
	}
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !seen[name] {
					seen[name] = true
					var s any
					_ = json.Unmarshal(doc.Components.Schemas[name], &s)
					walk(s)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, item := range doc.Paths {
		for _, raw := range item {
			var op struct {
				Responses map[string]any `json:"responses"`
			}
			_ = json.Unmarshal(raw, &op)
			for code, r := range op.Responses {
				if strings.HasPrefix(code, "2") {
					walk(r)
				}
			}
		}
	}
	for name := range seen {
		var s struct {
			Type       any            `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		_ = json.Unmarshal(doc.Components.Schemas[name], &s)
		if len(s.Properties) > 0 && !known[name] {
			t.Errorf("answer schema %s is not in ResponseBodies: its required members are not derived", name)
		}
	}
}
