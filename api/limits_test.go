package api

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// The request limits are defined once, in core/limits.go. Go struct tags
// cannot name a constant, so the validate tags and the swag annotations
// of the request types spell the numbers, and these tests hold each of
// them, and the committed OpenAPI document, to core's constants: change a
// limit in core and they name every tag and schema keyword to change.

// limitTags are the tags that state a rule of a request field.
var limitTags = []string{"validate", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"}

// wantTags is every rule tag of the publish, receive and settle request
// types (HTTP bodies and stream frames), as core's limits spell them. A
// field with a rule tag that is not listed here fails the test too.
func wantTags() map[string]map[string]string {
	d := func(n any) string { return fmt.Sprint(n) }
	handles := fmt.Sprintf("required,min=1,max=%d,dive,max=%d", core.MaxHandles, policy.MaxHandleLen)
	lease := fmt.Sprintf("min=%d,max=%d", minInvisibleSeconds, maxInvisibleSeconds)
	reason := map[string]string{"validate": fmt.Sprintf("omitempty,max=%d", core.MaxReasonLength), "maxLength": d(core.MaxReasonLength)}
	level := map[string]string{"validate": "min=-1", "minimum": "-1"}
	frameHandles := map[string]string{"validate": handles, "minItems": "1", "maxItems": d(core.MaxHandles)}
	frameID := map[string]string{"minLength": "1", "maxLength": d(maxFrameIDLen)}
	return map[string]map[string]string{
		"PublishRequest.Body":       {"minLength": "1"},
		"PublishRequest.BodyBase64": {"validate": "omitempty,min=4,base64"}, // the shape of base64, no limit
		"PublishRequest.Tags": {"validate": fmt.Sprintf("max=%d,excludes=0x7C0x7C", core.MaxTagsLen),
			"maxLength": d(core.MaxTagsLen)},
		"PublishRequest.Keys": {"validate": fmt.Sprintf("max=%d,dive,required,max=%d", core.MaxKeys, core.MaxKeyLen)},
		"PublishRequest.Properties": {"validate": fmt.Sprintf("max=%d,dive,keys,required,max=%d,endkeys,max=%d",
			core.MaxProperties, core.MaxPropertyNameLen, core.MaxPropertyValueLen)},
		"PublishRequest.ShardingKey": {"validate": fmt.Sprintf("max=%d", core.MaxKeyLen), "maxLength": d(core.MaxKeyLen)},
		"PublishRequest.DelayLevel":  {"validate": "omitempty,min=1", "minimum": "1"},
		"PublishRequest.DelaySeconds": {"validate": fmt.Sprintf("omitempty,min=0,max=%d", maxDelaySeconds),
			"minimum": "0", "maximum": d(maxDelaySeconds)},
		"PublishRequest.DeduplicationID": {"maxLength": d(core.MaxDedupIDLen)},
		"PublishRequest.TraceParent":     {"maxLength": d(core.MaxTraceParentLen)},
		"PublishRequest.TraceState":      {"maxLength": d(core.MaxTraceStateLen)},
		"PublishBatchRequest.Messages": {"validate": fmt.Sprintf("required,min=1,max=%d,dive", core.MaxBatch),
			"minItems": "1", "maxItems": d(core.MaxBatch)},
		"ReceiveRequest.MaxMessages": {"validate": fmt.Sprintf("omitempty,min=1,max=%d", core.MaxReceiveMessages),
			"minimum": "1", "maximum": d(core.MaxReceiveMessages)},
		"ReceiveRequest.WaitSeconds": {"validate": fmt.Sprintf("omitempty,min=0,max=%d", maxWaitSeconds),
			"minimum": "0", "maximum": d(maxWaitSeconds)},
		"ReceiveRequest.InvisibleSeconds": {"validate": "omitempty," + lease,
			"minimum": d(minInvisibleSeconds), "maximum": d(maxInvisibleSeconds)},
		"ReceiveRequest.ConsumerID":    {"validate": "omitempty,name"},
		"AckRequest.ReceiptHandles":    {"validate": handles},
		"NackRequest.ReceiptHandles":   {"validate": handles},
		"NackRequest.DelayLevel":       level,
		"NackRequest.Reason":           reason,
		"ExtendRequest.ReceiptHandles": {"validate": handles},
		"ExtendRequest.InvisibleSeconds": {"validate": "required," + lease,
			"minimum": d(minInvisibleSeconds), "maximum": d(maxInvisibleSeconds)},
		"AckFrame.ID":                {"minLength": "1", "maxLength": d(maxFrameIDLen)},
		"AckFrame.ReceiptHandles":    frameHandles,
		"NackFrame.ID":               frameID,
		"NackFrame.ReceiptHandles":   frameHandles,
		"NackFrame.DelayLevel":       level,
		"NackFrame.Reason":           reason,
		"ExtendFrame.ID":             frameID,
		"ExtendFrame.ReceiptHandles": frameHandles,
		"ExtendFrame.InvisibleSeconds": {"validate": "required," + lease,
			"minimum": d(minInvisibleSeconds), "maximum": d(maxInvisibleSeconds)},
		"PublishFrame.ID":       frameID,
		"PublishFrame.Messages": {"maxItems": d(core.MaxBatch)},
	}
}

// maxFrameIDLen is the id of a stream frame, a client's own name for it
// (no limit of core's).
const maxFrameIDLen = 64

// TestRequestLimitsAreCores: each rule tag of the request types is core's
// limit, and no rule tag goes unchecked.
func TestRequestLimitsAreCores(t *testing.T) {
	want := wantTags()
	seen := map[string]bool{}
	for _, v := range []any{PublishRequest{}, PublishBatchRequest{}, ReceiveRequest{}, AckRequest{}, NackRequest{},
		ExtendRequest{}, AckFrame{}, NackFrame{}, ExtendFrame{}, PublishFrame{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := typ.Name() + "." + f.Name
			got := map[string]string{}
			for _, k := range limitTags {
				if v, ok := f.Tag.Lookup(k); ok {
					got[k] = v
				}
			}
			w, listed := want[name]
			seen[name] = listed
			switch {
			case !listed && len(got) > 0:
				t.Errorf("%s has rule tags %v that no test holds to core's limits: add it to wantTags", name, got)
			case listed && !reflect.DeepEqual(got, w):
				t.Errorf("%s: tags %v, want %v (core/limits.go)", name, got, w)
			}
		}
	}
	// The group's default lease is a lease too.
	f, _ := reflect.TypeFor[GroupRequest]().FieldByName("InvisibleSeconds")
	if got, want := f.Tag.Get("validate"), fmt.Sprintf("omitempty,min=%d,max=%d", minInvisibleSeconds, maxInvisibleSeconds); got != want {
		t.Errorf("GroupRequest.InvisibleSeconds: validate %q, want %q (core/limits.go)", got, want)
	}
	if got, want := f.Tag.Get("maximum"), fmt.Sprint(maxInvisibleSeconds); got != want {
		t.Errorf("GroupRequest.InvisibleSeconds: maximum %q, want %q (core/limits.go)", got, want)
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("wantTags names %s, which is no field of the request types", name)
		}
	}
}

// TestOpenAPILimitsAreCores: the committed openapi/openapi.json states
// core's limits in the publish, receive and settle schemas (so a limit
// changed in core with a stale document, or a generator that drops a
// keyword, fails here).
func TestOpenAPILimitsAreCores(t *testing.T) {
	doc := loadDoc(t)
	type kw struct {
		path []string // from the schema: property names, "items", "additionalProperties", then the keyword
		want int64
	}
	publish := []kw{
		{[]string{"tags", "maxLength"}, core.MaxTagsLen},
		{[]string{"keys", "maxItems"}, core.MaxKeys},
		{[]string{"keys", "items", "maxLength"}, core.MaxKeyLen},
		{[]string{"properties", "maxProperties"}, core.MaxProperties},
		{[]string{"properties", "additionalProperties", "maxLength"}, core.MaxPropertyValueLen},
		{[]string{"shardingKey", "maxLength"}, core.MaxKeyLen},
		{[]string{"delaySeconds", "maximum"}, maxDelaySeconds},
		{[]string{"traceparent", "maxLength"}, core.MaxTraceParentLen},
		{[]string{"tracestate", "maxLength"}, core.MaxTraceStateLen},
	}
	handles := []kw{
		{[]string{"receiptHandles", "maxItems"}, core.MaxHandles},
		{[]string{"receiptHandles", "items", "maxLength"}, policy.MaxHandleLen},
	}
	lease := []kw{
		{[]string{"invisibleSeconds", "minimum"}, minInvisibleSeconds},
		{[]string{"invisibleSeconds", "maximum"}, maxInvisibleSeconds},
	}
	for schema, kws := range map[string][]kw{
		"PublishMessageRequest": publish,
		"PublishRequest":        append(publish, kw{[]string{"deduplicationId", "maxLength"}, core.MaxDedupIDLen}),
		"PublishBatchRequest":   {{[]string{"messages", "maxItems"}, core.MaxBatch}},
		"ReceiveRequest": append([]kw{
			{[]string{"maxMessages", "maximum"}, core.MaxReceiveMessages},
			{[]string{"waitSeconds", "maximum"}, maxWaitSeconds},
		}, lease...),
		"AckRequest":    handles,
		"NackRequest":   append([]kw{{[]string{"reason", "maxLength"}, core.MaxReasonLength}}, handles...),
		"ExtendRequest": append(lease, handles...),
	} {
		s := schemaNamed(t, doc, schema)
		for _, k := range kws {
			var cur any = s["properties"]
			for _, p := range k.path {
				m, _ := cur.(map[string]any)
				cur = m[p]
			}
			got, ok := num(cur)
			if !ok || int64(got) != k.want {
				t.Errorf("openapi.json %s.%v = %v, want %d (core/limits.go; make openapi)", schema, k.path, cur, k.want)
			}
		}
	}
	// Query parameters with a limit of core's (the consume stream's lease).
	bounds := map[string][2]int64{"invisibleSeconds": {minInvisibleSeconds, maxInvisibleSeconds}}
	found := 0
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			params, _ := op.(map[string]any)["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				b, ok := bounds[p["name"].(string)]
				if !ok {
					continue
				}
				found++
				s := p["schema"].(map[string]any)
				lo, _ := num(s["minimum"])
				hi, _ := num(s["maximum"])
				if int64(lo) != b[0] || int64(hi) != b[1] {
					t.Errorf("openapi.json %s %s parameter %s: %v..%v, want %d..%d (core/limits.go)", method, path, p["name"], s["minimum"], s["maximum"], b[0], b[1])
				}
			}
		}
	}
	if found == 0 {
		t.Error("openapi.json has no invisibleSeconds query parameter to check (the consume stream's)")
	}
}
