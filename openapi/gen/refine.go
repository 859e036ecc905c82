package main

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mqgate/mqgate/api"
)

// refine writes into the converted document what swag cannot say and the
// server enforces (api/schema.go is the list): required members and
// nullability from the Go types, every validate tag as a schema
// constraint, additionalProperties: false on request bodies, the
// exactly-one / at-most-one groups, path parameter patterns, optional
// security, and every status each operation can answer.
func refine(doc *openapi3.T) error {
	schemas := doc.Components.Schemas
	for _, v := range api.RequestBodies {
		if err := refineType(schemas, reflect.TypeOf(v), true); err != nil {
			return err
		}
	}
	for _, v := range api.ResponseBodies {
		if err := refineType(schemas, reflect.TypeOf(v), false); err != nil {
			return err
		}
	}
	for _, g := range api.FieldGroups {
		ref, ok := schemas[g.Type]
		if !ok {
			return fmt.Errorf("field group on unknown schema %s", g.Type)
		}
		// Each group is one allOf entry: the rules compose, and generators
		// (Schemathesis) handle a oneOf inside allOf where they give up on
		// a oneOf beside properties.
		s := ref.Value
		if len(g.ExactlyOne) > 0 {
			var one openapi3.SchemaRefs
			for _, name := range g.ExactlyOne {
				one = append(one, openapi3.NewSchemaRef("", &openapi3.Schema{Required: []string{name}}))
			}
			s.AllOf = append(s.AllOf, openapi3.NewSchemaRef("", &openapi3.Schema{OneOf: one}))
			s.Description = strings.TrimSpace(s.Description + " Exactly one of " + strings.Join(g.ExactlyOne, ", ") + ".")
		}
		if len(g.AtMostOne) > 0 {
			var pairs openapi3.SchemaRefs
			for i, a := range g.AtMostOne {
				for _, b := range g.AtMostOne[i+1:] {
					pairs = append(pairs, openapi3.NewSchemaRef("", &openapi3.Schema{Required: []string{a, b}}))
				}
			}
			s.AllOf = append(s.AllOf, openapi3.NewSchemaRef("", &openapi3.Schema{Not: openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: pairs})}))
			s.Description = strings.TrimSpace(s.Description + " At most one of " + strings.Join(g.AtMostOne, ", ") + ".")
		}
	}

	// Security: /v1 takes a bearer key only when the server runs with
	// --api-keys, so the requirement is optional ({} is "no key").
	optional := openapi3.SecurityRequirements{{"BearerAuth": []string{}}, {}}
	none := openapi3.SecurityRequirements{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			v1 := strings.HasPrefix(path, "/v1/")
			if v1 {
				sec := slices.Clone(optional)
				op.Security = &sec
			} else {
				sec := slices.Clone(none)
				op.Security = &sec
			}
			hasPattern := false
			for _, p := range op.Parameters {
				if p.Value == nil || p.Value.Schema == nil || p.Value.Schema.Value == nil {
					continue
				}
				ps := p.Value.Schema.Value
				if p.Value.In == "path" {
					if pat := api.PathParamPattern(method, p.Value.Name); pat != "" {
						ps.Pattern = pat
						hasPattern = true
					}
				}
				if pat, ok := api.ParamPatterns[p.Value.Name]; ok {
					ps.Pattern = pat
				}
				if pat, ok := api.ParamPatterns[op.OperationID+"."+p.Value.Name]; ok {
					ps.Pattern = pat
				}
				if lim, ok := api.ParamLimits[p.Value.Name]; ok {
					ps.MinLength = uint64(lim[0])
					ps.MaxLength = ptr(uint64(lim[1]))
				}
			}
			add := func(status int, desc string) {
				if op.Responses.Value(strconv.Itoa(status)) == nil {
					op.Responses.Set(strconv.Itoa(status), &openapi3.ResponseRef{Value: problemResponse(schemas["Problem"], desc)})
				}
			}
			add(http.StatusInternalServerError, "Internal error (quote the request id)")
			if op.RequestBody != nil {
				add(http.StatusBadRequest, "Invalid request")
				add(http.StatusRequestTimeout, "The body did not arrive within the body read deadline")
				add(http.StatusRequestEntityTooLarge, "Body over the limit")
				add(http.StatusUnsupportedMediaType, "Not application/json, or a Content-Encoding")
			}
			if hasPattern {
				add(http.StatusBadRequest, "Invalid request")
			}
			if v1 {
				add(http.StatusUnauthorized, "Missing or bad API key (when the server has --api-keys)")
				add(http.StatusForbidden, "The API key lacks the grant")
				add(http.StatusServiceUnavailable, "Shutting down, or the store cannot commit; retry after Retry-After")
			}
			for code, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil || ref.Value == nil {
					continue
				}
				if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
					ref.Value.Headers = openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
						Description: "Seconds to wait before retrying",
						Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: ptr(0.0)}),
					}}}}
				}
			}
		}
	}
	addLinks(doc)
	unwrapAllOf(doc)
	humanize(doc) // people.go
	if err := splitSinglePublish(doc); err != nil {
		return err
	}
	return setTags(doc)
}

// addLinks says how the resources flow (OpenAPI links, which stateful
// testers such as Schemathesis follow): a created or updated topic or
// group is the {topic} / {group} of every operation under it, and a
// published message's id is the {messageId} of GET by id.
func addLinks(doc *openapi3.T) {
	type target struct{ id, path string }
	var ops []target
	for path, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops = append(ops, target{op.OperationID, path})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	link := func(op *openapi3.Operation, codes []string, name string, l *openapi3.Link) {
		for _, code := range codes {
			if r := op.Responses.Value(code); r != nil && r.Value != nil {
				if r.Value.Links == nil {
					r.Value.Links = openapi3.Links{}
				}
				r.Value.Links[name] = &openapi3.LinkRef{Value: l}
			}
		}
	}
	for _, src := range []struct{ path, param string }{{"/v1/topics/{topic}", "topic"}, {"/v1/groups/{group}", "group"}} {
		put := doc.Paths.Value(src.path).Put
		for _, t := range ops {
			if t.id == put.OperationID || !strings.HasPrefix(t.path, src.path) {
				continue
			}
			link(put, []string{"200", "201"}, t.id, &openapi3.Link{
				OperationID: t.id,
				Parameters:  map[string]any{src.param: "$request.path." + src.param},
			})
		}
	}
	publish := doc.Paths.Value("/v1/topics/{topic}/messages").Post
	link(publish, []string{"201"}, "getMessage", &openapi3.Link{
		OperationID: "getMessage",
		Parameters:  map[string]any{"topic": "$request.path.topic", "messageId": "$response.body#/messageId"},
	})
}

// unwrapAllOf replaces a property that is only allOf: [$ref] (swag's way
// to hang a description on a reference) by the reference itself; a
// wrapper that carries nullable stays.
func unwrapAllOf(doc *openapi3.T) {
	var visit func(ref *openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || ref.Ref != "" {
			return
		}
		s := ref.Value
		for _, p := range s.Properties {
			visit(p)
		}
		visit(s.Items)
		if len(s.AllOf) == 1 && !s.Nullable && s.AllOf[0].Ref != "" {
			*ref = *openapi3.NewSchemaRef(s.AllOf[0].Ref, s.AllOf[0].Value)
		}
	}
	for _, ref := range doc.Components.Schemas {
		visit(ref)
	}
}

func problemResponse(problem *openapi3.SchemaRef, desc string) *openapi3.Response {
	return openapi3.NewResponse().WithDescription(desc).WithContent(openapi3.Content{
		"application/problem+json": &openapi3.MediaType{Schema: openapi3.NewSchemaRef("#/components/schemas/Problem", problem.Value)},
	})
}

func ptr[T any](v T) *T { return &v }

// refineType sets required, nullable and (for requests) the validate
// constraints and additionalProperties: false on the schema of t.
func refineType(schemas openapi3.Schemas, t reflect.Type, request bool) error {
	ref, ok := schemas[t.Name()]
	if !ok || ref.Value == nil {
		return fmt.Errorf("no schema %s in the swag output", t.Name())
	}
	s := ref.Value
	var required []string
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		pref, ok := s.Properties[name]
		if !ok || pref == nil {
			return fmt.Errorf("%s.%s: no property %q in the swag output", t.Name(), f.Name, name)
		}
		prop := propSchema(pref)
		omitempty := strings.Contains(opts, "omitempty")
		if f.Type.Kind() == reflect.Pointer && !omitempty {
			prop.Nullable = true
		}
		if !request {
			if !omitempty {
				required = append(required, name)
			}
			continue
		}
		rules := f.Tag.Get("validate")
		if err := applyRules(prop, f.Type, rules); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		top, _, _ := strings.Cut(rules, ",dive")
		if slices.Contains(strings.Split(top, ","), "required") {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	s.Required = required
	if request {
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: ptr(false)}
	}
	return nil
}

// propSchema returns the schema a property's constraints go on: swag
// wraps a referenced struct in allOf to give it a description; a plain
// $ref gets the same wrapper so nullable has a place.
func propSchema(ref *openapi3.SchemaRef) *openapi3.Schema {
	if ref.Ref != "" {
		inner := openapi3.NewSchemaRef(ref.Ref, ref.Value)
		ref.Ref = ""
		ref.Value = &openapi3.Schema{AllOf: openapi3.SchemaRefs{inner}}
	}
	return ref.Value
}

// applyRules writes a validate tag's rules into prop: the rules before
// dive apply to the member, those after it to each element (or map
// value; map keys between keys and endkeys cannot be said in OpenAPI
// 3.0 and go into the description).
func applyRules(prop *openapi3.Schema, t reflect.Type, tag string) error {
	if tag == "" {
		return nil
	}
	origKind := t.Kind()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	parts := strings.Split(tag, ",")
	i := slices.Index(parts, "dive")
	own, elem := parts, []string(nil)
	if i >= 0 {
		own, elem = parts[:i], parts[i+1:]
	}
	for _, r := range own {
		if err := applyRule(prop, t, r); err != nil {
			return err
		}
	}
	// omitempty on a plain number: 0 means "absent, take the default",
	// so 0 is accepted too. Only a range starting at 1 stays one range.
	if isNumber(t) && slices.Contains(own, "omitempty") && origKind != reflect.Pointer && prop.Min != nil && *prop.Min > 0 {
		if *prop.Min != 1 {
			return fmt.Errorf("omitempty with min=%v on a non-pointer number cannot be said in OpenAPI: make it a pointer", *prop.Min)
		}
		prop.Min = ptr(0.0)
		prop.Description = strings.TrimSpace(prop.Description + " 0 or absent: the default.")
	}
	if i < 0 {
		return nil
	}
	if t.Kind() == reflect.Map {
		if j := slices.Index(elem, "endkeys"); j >= 0 && len(elem) > 0 && elem[0] == "keys" {
			keys := elem[1:j]
			elem = elem[j+1:]
			prop.Description = strings.TrimSpace(prop.Description + " Property names: " + describeKeyRules(keys) + ".")
		}
		vs := prop.AdditionalProperties.Schema
		if vs == nil || vs.Value == nil {
			return fmt.Errorf("map without an additionalProperties schema")
		}
		return applyRules(vs.Value, t.Elem(), strings.Join(elem, ","))
	}
	if prop.Items == nil {
		return fmt.Errorf("dive on a member without items")
	}
	return applyRules(propSchema(prop.Items), t.Elem(), strings.Join(elem, ","))
}

func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func describeKeyRules(rules []string) string {
	var out []string
	for _, r := range rules {
		switch {
		case r == "required":
			out = append(out, "not empty")
		case strings.HasPrefix(r, "max="):
			out = append(out, "at most "+r[4:]+" characters")
		}
	}
	return strings.Join(out, ", ")
}

var excludesHex = regexp.MustCompile(`0x[0-9A-Fa-f]{2}`)

func applyRule(prop *openapi3.Schema, t reflect.Type, rule string) error {
	name, param, _ := strings.Cut(rule, "=")
	num := func() (float64, error) { return strconv.ParseFloat(param, 64) }
	switch name {
	case "", "omitempty":
	case "required":
		switch t.Kind() {
		case reflect.String:
			prop.MinLength = max(prop.MinLength, 1)
		case reflect.Slice, reflect.Map:
			// presence: the member goes into required
		}
	case "min", "max":
		n, err := num()
		if err != nil {
			return err
		}
		u := uint64(max(n, 0))
		switch t.Kind() {
		case reflect.String:
			if name == "min" {
				prop.MinLength = u
			} else {
				prop.MaxLength = &u
			}
		case reflect.Slice, reflect.Array:
			if name == "min" {
				prop.MinItems = u
			} else {
				prop.MaxItems = &u
			}
		case reflect.Map:
			if name == "min" {
				prop.MinProps = u
			} else {
				prop.MaxProps = &u
			}
		default:
			if name == "min" {
				prop.Min = &n
			} else {
				prop.Max = &n
			}
		}
	case "oneof":
		prop.Enum = nil
		for _, v := range strings.Fields(param) {
			prop.Enum = append(prop.Enum, v)
		}
	case "excludes":
		s := excludesHex.ReplaceAllStringFunc(param, func(h string) string {
			b, _ := strconv.ParseUint(h[2:], 16, 8)
			return string(rune(b))
		})
		prop.Not = openapi3.NewSchemaRef("", &openapi3.Schema{Pattern: regexp.QuoteMeta(s)})
	default:
		pat, ok := api.PatternTags[name]
		if !ok {
			return fmt.Errorf("validate rule %q has no OpenAPI form: add it to openapi/gen/refine.go", rule)
		}
		prop.Pattern = pat
	}
	return nil
}
