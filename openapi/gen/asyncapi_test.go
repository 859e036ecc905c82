package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/api"
)

// TestAsyncAPIMatchesFrameTypes: the committed openapi/asyncapi.json is
// what the generator makes from the Go frame types now, and each of its
// messages has exactly the JSON members of its Go type, the frame's
// type as a constant, on the right channel and operation.
func TestAsyncAPIMatchesFrameTypes(t *testing.T) {
	gen, err := asyncAPI("../../api")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../asyncapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gen, committed) {
		t.Fatal("openapi/asyncapi.json is stale: run `make openapi` and commit it")
	}
	var doc struct {
		AsyncAPI   string                                       `json:"asyncapi"`
		Channels   map[string]struct{ Messages map[string]any } `json:"channels"`
		Operations map[string]struct {
			Action   string
			Messages []map[string]string
		} `json:"operations"`
		Components struct {
			Messages map[string]struct{ Payload map[string]string }
			Schemas  map[string]struct {
				Properties map[string]map[string]any
				Required   []string
			}
		}
	}
	if err := json.Unmarshal(committed, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.AsyncAPI != "3.0.0" {
		t.Fatalf("asyncapi %q", doc.AsyncAPI)
	}
	for _, f := range api.StreamFrames() {
		m, ok := doc.Components.Messages[f.Name]
		if !ok {
			t.Fatalf("no message %s", f.Name)
		}
		typ := reflect.TypeOf(f.Example)
		if m.Payload["$ref"] != "#/components/schemas/"+typ.Name() {
			t.Errorf("%s: payload %v, want %s", f.Name, m.Payload, typ.Name())
		}
		s := doc.Components.Schemas[typ.Name()]
		var goNames []string
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			goNames = append(goNames, name)
		}
		var docNames []string
		for n := range s.Properties {
			docNames = append(docNames, n)
		}
		sort.Strings(goNames)
		sort.Strings(docNames)
		if !reflect.DeepEqual(goNames, docNames) {
			t.Errorf("%s: document members %v, Go members %v", f.Name, docNames, goNames)
		}
		if s.Properties["type"]["const"] != f.Type {
			t.Errorf("%s: type const %v, want %q", f.Name, s.Properties["type"]["const"], f.Type)
		}
		if _, ok := doc.Channels[f.Stream].Messages[f.Name]; !ok {
			t.Errorf("%s: not on channel %s", f.Name, f.Stream)
		}
		key := f.Stream + map[bool]string{true: "Send", false: "Receive"}[f.ToServer]
		op := doc.Operations[key]
		found := false
		for _, r := range op.Messages {
			found = found || r["$ref"] == "#/channels/"+f.Stream+"/messages/"+f.Name
		}
		if !found || op.Action != map[bool]string{true: "send", false: "receive"}[f.ToServer] {
			t.Errorf("%s: not in operation %s (%s)", f.Name, key, op.Action)
		}
	}
}
