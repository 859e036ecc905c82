package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mqgate/mqgate/api"
)

// Making the document read for people (issue 24): /docs shows a
// description under every section, fields are described in the API's
// terms rather than as Go identifiers, and the single publish has a
// schema of its own without the batch-only deduplicationId.

// setTags writes api.Tags as the document's tags and refuses an operation
// tagged with anything else (its /docs section would have no description).
func setTags(doc *openapi3.T) error {
	known := map[string]bool{}
	doc.Tags = nil
	for _, t := range api.Tags {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t.Name, Description: t.Description})
		known[t.Name] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if len(op.Tags) == 0 {
				return fmt.Errorf("%s %s has no tag", method, path)
			}
			for _, t := range op.Tags {
				if !known[t] {
					return fmt.Errorf("%s %s: tag %q is not in api.Tags", method, path, t)
				}
			}
		}
	}
	return nil
}

// singlePublishSchema is the body of POST /v1/topics/{topic}/messages:
// PublishRequest without deduplicationId, which only batch entries take
// (a single publish answers 400 to it and takes Idempotency-Key). The Go
// client keeps one type for both (x-go-type).
const singlePublishSchema = "PublishMessageRequest"

func splitSinglePublish(doc *openapi3.T) error {
	schemas := doc.Components.Schemas
	entry, ok := schemas["PublishRequest"]
	if !ok || entry.Value == nil {
		return fmt.Errorf("no PublishRequest schema")
	}
	raw, err := json.Marshal(entry.Value)
	if err != nil {
		return err
	}
	var single openapi3.Schema
	if err := json.Unmarshal(raw, &single); err != nil {
		return err
	}
	if _, ok := single.Properties["deduplicationId"]; !ok {
		return fmt.Errorf("PublishRequest has no deduplicationId")
	}
	delete(single.Properties, "deduplicationId")
	single.Description = strings.TrimSpace("A message to publish. " + entry.Value.Description +
		" Repeats are made idempotent by the Idempotency-Key header.")
	single.Extensions = map[string]any{"x-go-type": "PublishRequest"}
	entry.Value.Description = strings.TrimSpace("A message of a batch. " + entry.Value.Description +
		" A deduplicationId makes the entry idempotent.")
	schemas[singlePublishSchema] = openapi3.NewSchemaRef("", &single)

	op := doc.Paths.Find("/v1/topics/{topic}/messages")
	if op == nil || op.Post == nil || op.Post.RequestBody == nil || op.Post.RequestBody.Value == nil {
		return fmt.Errorf("no POST /v1/topics/{topic}/messages body")
	}
	mt := op.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/PublishRequest" {
		return fmt.Errorf("POST /v1/topics/{topic}/messages does not take PublishRequest")
	}
	mt.Schema = openapi3.NewSchemaRef("#/components/schemas/"+singlePublishSchema, &single)
	return nil
}

// humanize rewrites descriptions that swag took from Go doc comments,
// which open with the Go name ("DeduplicationID makes…", "Body is a
// UTF-8 text…"): the name (and an "is"/"are" after it) goes, so the
// description says what the member is ("Makes…", "A UTF-8 text…").
func humanize(doc *openapi3.T) {
	types := append(append([]any{}, api.RequestBodies...), api.ResponseBodies...)
	types = append(types, api.JobFilter{}, api.PurgeRequest{}) // bodies the strict tables leave out
	for _, v := range types {
		t := reflect.TypeOf(v)
		ref, ok := doc.Components.Schemas[t.Name()]
		if !ok || ref.Value == nil {
			continue
		}
		s := ref.Value
		s.Description = dropGoName(s.Description, t.Name())
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				name = f.Name
			}
			p, ok := s.Properties[name]
			if !ok || p == nil || p.Value == nil {
				continue
			}
			p.Value.Description = dropGoName(p.Value.Description, f.Name)
			for _, in := range p.Value.AllOf { // a described $ref: the description is on the wrapper
				if in.Ref == "" && in.Value != nil {
					in.Value.Description = dropGoName(in.Value.Description, f.Name)
				}
			}
		}
	}
}

// dropGoName removes a leading Go identifier goName (and a following
// "is" or "are", or a colon) from desc and capitalizes what is left.
func dropGoName(desc, goName string) string {
	rest, ok := strings.CutPrefix(desc, goName+" ")
	if !ok {
		if rest, ok = strings.CutPrefix(desc, goName+": "); !ok {
			return desc
		}
	}
	for _, verb := range []string{"is ", "are "} {
		if r, ok := strings.CutPrefix(rest, verb); ok {
			rest = r
			break
		}
	}
	r, n := utf8.DecodeRuneInString(rest)
	if n == 0 {
		return desc
	}
	word, _, _ := strings.Cut(rest, " ")
	if strings.IndexFunc(word, unicode.IsUpper) > 0 {
		return rest // a JSON member name such as maxOffset keeps its case
	}
	return string(unicode.ToUpper(r)) + rest[n:]
}
