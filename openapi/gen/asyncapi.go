package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/core"
)

// The AsyncAPI 3 document of the WebSocket streams (openapi/asyncapi.json)
// is generated from the Go frame types of api/stream_frames.go
// (api.StreamFrames): their JSON members, the limits in their tags, and
// their doc comments, read from the source in api/. The server decodes
// and encodes exactly those types, so the document cannot drift from it;
// `make openapi-check` fails when the committed one is stale.

// asyncAPI builds the document; apiDir is the api package's source.
func asyncAPI(apiDir string) ([]byte, error) {
	docs, err := fieldDocs(apiDir)
	if err != nil {
		return nil, err
	}
	g := &schemaGen{docs: docs, schemas: map[string]any{}}
	messages := map[string]any{}
	type op struct {
		stream string
		send   bool
		refs   []any
	}
	ops := map[string]*op{}
	for _, f := range api.StreamFrames() {
		t := reflect.TypeOf(f.Example)
		ref := g.ref(t)
		messages[f.Name] = map[string]any{
			"name":    f.Name,
			"title":   f.Type + " (" + direction(f.ToServer) + ")",
			"summary": f.Summary,
			"payload": ref,
			"externalDocs": map[string]any{
				"url": "https://github.com/mqgate/mqgate/blob/main/docs/streaming.md#" + f.Reference,
			},
		}
		key := f.Stream + map[bool]string{true: "Send", false: "Receive"}[f.ToServer]
		if ops[key] == nil {
			ops[key] = &op{stream: f.Stream, send: f.ToServer}
		}
		ops[key].refs = append(ops[key].refs, map[string]any{"$ref": "#/channels/" + f.Stream + "/messages/" + f.Name})
	}
	channels := map[string]any{}
	for _, stream := range []string{"consume", "publish"} {
		chMsgs := map[string]any{}
		for _, f := range api.StreamFrames() {
			if f.Stream == stream {
				chMsgs[f.Name] = map[string]any{"$ref": "#/components/messages/" + f.Name}
			}
		}
		ch := map[string]any{"messages": chMsgs}
		switch stream {
		case "consume":
			ch["address"] = "/v1/groups/{group}/stream"
			ch["title"] = "Consume stream"
			ch["description"] = "Deliveries pushed within the flow limits; ack, nack, extend and flow frames answered per handle. GET, upgraded to WebSocket with subprotocol " + api.StreamProtocol + "."
			ch["parameters"] = map[string]any{"group": map[string]any{"description": "The consumer group."}}
			ch["bindings"] = wsBinding(map[string]any{
				"consumerId":             map[string]any{"type": "string", "pattern": core.NamePattern, "description": "The consumer's name; required for BROADCASTING groups."},
				"invisibleSeconds":       map[string]any{"type": "integer", "minimum": int(core.MinInvisible / time.Second), "maximum": int(core.MaxInvisible / time.Second), "description": "The lease of each delivery (default: the group's)."},
				"maxOutstandingMessages": map[string]any{"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000, "description": "Most deliveries out and not yet settled."},
				"maxOutstandingBytes":    map[string]any{"type": "integer", "minimum": 1024, "maximum": 268435456, "default": 10485760, "description": "Most body bytes out and not yet settled."},
			})
		case "publish":
			ch["address"] = "/v1/topics/{topic}/stream"
			ch["title"] = "Publish stream"
			ch["description"] = "Publish frames confirmed once durable, within the unconfirmed limits. GET, upgraded to WebSocket with subprotocol " + api.StreamProtocol + "."
			ch["parameters"] = map[string]any{"topic": map[string]any{"description": "The topic."}}
			ch["bindings"] = wsBinding(map[string]any{
				"maxUnconfirmedMessages": map[string]any{"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000, "description": "Most messages read and not yet confirmed."},
				"maxUnconfirmedBytes":    map[string]any{"type": "integer", "minimum": 65536, "maximum": 268435456, "default": 16777216, "description": "Most frame bytes read and not yet confirmed."},
			})
		}
		channels[stream] = ch
	}
	operations := map[string]any{}
	for key, o := range ops {
		action, verb := "receive", "The client receives"
		if o.send {
			action, verb = "send", "The client sends"
		}
		operations[key] = map[string]any{
			"action":   action,
			"channel":  map[string]any{"$ref": "#/channels/" + o.stream},
			"summary":  verb + " these frames on the " + o.stream + " stream.",
			"messages": o.refs,
		}
	}
	out := map[string]any{
		"asyncapi": "3.0.0",
		"info": map[string]any{
			"title":   "mqgate streams",
			"version": api.StreamProtocol,
			"description": "The WebSocket streams of mqgate (subprotocol " + api.StreamProtocol + "): consume and publish over one connection, " +
				"with the semantics of the REST endpoints. Every frame is one text frame holding one JSON object with a type member. " +
				"Operations are described from the client's side (send: client to server). Generated from the Go frame types " +
				"(api/stream_frames.go) by openapi/gen; the reference a person reads is docs/streaming.md.",
			"license": map[string]any{"name": "See the repository"},
		},
		"defaultContentType": "application/json",
		"servers": map[string]any{
			"mqgate": map[string]any{
				"host":        "localhost:8080",
				"protocol":    "ws",
				"description": "An mqgate server (wss with --tls-cert). API keys: Authorization: Bearer <key>, or the subprotocol mqgate.key.<base64url of the key> for browsers.",
				"security":    []any{map[string]any{"$ref": "#/components/securitySchemes/bearer"}},
			},
		},
		"channels":   channels,
		"operations": operations,
		"components": map[string]any{
			"messages": messages,
			"schemas":  g.schemas,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "The API key, when the server has --api-keys."},
			},
		},
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func direction(toServer bool) string {
	if toServer {
		return "client → server"
	}
	return "server → client"
}

func wsBinding(query map[string]any) map[string]any {
	return map[string]any{"ws": map[string]any{
		"method":         "GET",
		"bindingVersion": "0.1.0",
		"query":          map[string]any{"type": "object", "additionalProperties": false, "properties": query},
		"headers": map[string]any{"type": "object", "properties": map[string]any{
			"Sec-WebSocket-Protocol": map[string]any{"type": "string", "description": api.StreamProtocol + " (required), and for browsers " + api.StreamKeyProtocolPrefix + "<base64url of the API key, no padding>."},
			"Authorization":          map[string]any{"type": "string", "description": "Bearer <API key>, when the server has --api-keys."},
		}},
	}}
}

// schemaGen turns Go types into JSON Schemas under components/schemas.
type schemaGen struct {
	docs    map[string]map[string]string // type → field → doc; type → "" → type doc
	schemas map[string]any
}

func (g *schemaGen) ref(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if _, ok := g.schemas[name]; !ok {
		g.schemas[name] = nil // placeholder: recursion
		g.schemas[name] = g.object(t)
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	sort.Strings(required)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	if d := g.docs[t.Name()][""]; d != "" {
		s["description"] = d
	}
	return s
}

// fields adds t's JSON members, embedded structs inlined as encoding/json does.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			g.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := g.schema(f.Type)
		if d := g.docs[t.Name()][f.Name]; d != "" {
			s["description"] = d
		}
		applyTags(s, f)
		props[name] = s
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			*required = append(*required, name)
		}
	}
}

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	if t == reflect.TypeFor[time.Time]() {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		return g.ref(t)
	}
	panic(fmt.Sprintf("asyncapi: no schema for %v", t))
}

// applyTags carries the limits swag reads from the same tags.
func applyTags(s map[string]any, f reflect.StructField) {
	if _, isRef := s["$ref"]; isRef {
		return
	}
	num := func(tag, key string) {
		if v := f.Tag.Get(tag); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				s[key] = n
			}
		}
	}
	if v := f.Tag.Get("enums"); v != "" {
		e := strings.Split(v, ",")
		if len(e) == 1 {
			s["const"] = e[0]
		} else {
			s["enum"] = e
		}
	}
	if v := f.Tag.Get("format"); v != "" {
		s["format"] = v
	}
	num("minimum", "minimum")
	num("maximum", "maximum")
	num("minLength", "minLength")
	num("maxLength", "maxLength")
	num("minItems", "minItems")
	num("maxItems", "maxItems")
	if v := f.Tag.Get("example"); v != "" {
		if s["type"] == "integer" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				s["examples"] = []any{n}
			}
		} else if s["type"] == "string" {
			s["examples"] = []any{v}
		}
	}
}

// fieldDocs reads the doc comments of the api package's struct types and
// their fields.
func fieldDocs(dir string) (map[string]map[string]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	clean := func(cg *ast.CommentGroup) string {
		if cg == nil {
			return ""
		}
		return strings.Join(strings.Fields(cg.Text()), " ")
	}
	for name, pkg := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					m := map[string]string{}
					d := ts.Doc
					if d == nil {
						d = gd.Doc
					}
					m[""] = clean(d)
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							m[n.Name] = clean(fl.Doc)
						}
					}
					out[ts.Name.Name] = m
				}
			}
		}
	}
	return out, nil
}
