package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// TestPublishLimitsAreCores: the validate tags of PublishRequest spell
// core's limits (the one definition, core/message.go), so the API and the
// engine refuse the same messages.
func TestPublishLimitsAreCores(t *testing.T) {
	typ := reflect.TypeFor[PublishRequest]()
	for field, want := range map[string]string{
		"Tags":        fmt.Sprintf("max=%d,", core.MaxTagsLen),
		"ShardingKey": fmt.Sprintf("max=%d", core.MaxKeyLen),
		"Keys":        fmt.Sprintf("max=%d,dive,required,max=%d", core.MaxKeys, core.MaxKeyLen),
		"Properties": fmt.Sprintf("max=%d,dive,keys,required,max=%d,endkeys,max=%d",
			core.MaxProperties, core.MaxPropertyNameLen, core.MaxPropertyValueLen),
	} {
		f, ok := typ.FieldByName(field)
		if !ok {
			t.Fatalf("PublishRequest has no field %s", field)
		}
		if tag := f.Tag.Get("validate"); !strings.HasPrefix(tag, want) {
			t.Errorf("PublishRequest.%s: validate %q, want it to start %q (core's limits)", field, tag, want)
		}
	}
	// The OpenAPI document's maxLength of the text fields, too.
	for field, want := range map[string]int{"Tags": core.MaxTagsLen, "ShardingKey": core.MaxKeyLen} {
		f, _ := typ.FieldByName(field)
		if tag := f.Tag.Get("maxLength"); tag != fmt.Sprint(want) {
			t.Errorf("PublishRequest.%s: maxLength %q, want %d (core's limits)", field, tag, want)
		}
	}
}
