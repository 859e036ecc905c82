package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/openapi"
)

// TestOpenAPIRequiredMatchesValidation checks that the committed OpenAPI
// document marks a request field required exactly when the handler rejects
// a body without it (a top-level "required" in its validate tag). Generated
// clients turn "required" into non-pointer fields that are always sent, so a
// wrong mark changes what SDK users put on the wire.
func TestOpenAPIRequiredMatchesValidation(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		PublishRequest{}, PublishBatchRequest{}, TopicRequest{}, GroupRequest{}, SubscriptionBody{},
		PushBody{}, OffsetResetRequest{}, ReceiveRequest{}, AckRequest{}, NackRequest{}, ExtendRequest{},
	} {
		typ := reflect.TypeOf(v)
		schema, ok := doc.Components.Schemas[typ.Name()]
		if !ok {
			t.Errorf("%s: no schema in openapi.json", typ.Name())
			continue
		}
		var want []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			rules, _, _ := strings.Cut(f.Tag.Get("validate"), ",dive")
			if slices.Contains(strings.Split(rules, ","), "required") {
				want = append(want, name)
			}
		}
		got := slices.Clone(schema.Required)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: openapi.json requires %v, the handler requires %v", typ.Name(), got, want)
		}
	}
}
