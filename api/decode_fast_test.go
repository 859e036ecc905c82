package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// fastBodies are seeds of FuzzFastDecode: the shapes the fast path takes
// and its edges (escapes, numbers, nulls, duplicates, odd white space).
var fastBodies = []string{
	`{"receiptHandles":["AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg"]}`, `{"receiptHandles":[]}`,
	` {"receiptHandles" : [ "a" , "b" ] } `, `{"receiptHandles":["a"],"receiptHandles":["b"]}`, `{"receiptHandles":null}`,
	`{"receiptHandles":["a\u0041"]}`, `{"receiptHandles":["a"]} x`, `{"receiptHandles":["a",]}`, `{"receipthandles":["a"]}`,
	`{"messages":[{"body":"x"},{"bodyBase64":"AAE=","tags":"t","keys":["k"],"properties":{"a":"b"}}]}`, `{"messages":[]}`,
	`{"messages":[{"body":"x"}],"messages":[]}`, `{"messages":[{"body":"x","body":"y"}]}`, `{"messages":[{"body":"x","delayLevel":1}]}`,
	`{"messages":[{}]}`, `{"messages":[{"body":"é\u00e9"}]}`, "{\"messages\":[{\"body\":\"\xff\"}]}", `{"messages":{}}`,
	`{"body":"x","properties":{"":""}}`, `{"body":"x","properties":{"a":"1","a":"2"}}`, `{"body":"x","properties":{}}`,
	`{"body":"x","keys":[]}`, `{"body":"x","deduplicationId":"d","shardingKey":"s"}`, "{\"body\":\"a\tb\"}", "{\"body\":\"a\x7fb\"}",
	"{\"body\":\"\xed\xa0\x80\"}", "\t{\"body\":\"x\"}\r\n", `{"body":"x"}{}`, `{"body":"x",}`, `{,"body":"x"}`, `{"body":"x"`,
	`{"body" "x"}`, `{"body":"x" "tags":"t"}`, `{"body":"x","keys":["a" "b"]}`, `{"body":"x","properties":{"a":"b",}}`,
}

// FuzzFastDecode: whatever the fast path accepts, the strict decoder
// accepts too and decodes to the same value.
func FuzzFastDecode(f *testing.F) {
	for _, b := range append(append(fastBodies, publishBodies...), `{"messages":[`+strings.Join(publishBodies[:8], ",")+`]}`) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, typ := range []reflect.Type{reflect.TypeFor[PublishRequest](), reflect.TypeFor[PublishBatchRequest](), reflect.TypeFor[AckRequest]()} {
			fast := reflect.New(typ)
			if !fastDecode([]byte(body), fast.Interface()) {
				if !fast.Elem().IsZero() {
					t.Fatalf("%s %q: refused but changed the value", typ, body)
				}
				continue
			}
			strict := reflect.New(typ)
			if err := jsonv2.Unmarshal([]byte(body), strict.Interface(), strictJSON); err != nil {
				t.Fatalf("%s %q: fast path took it, strict decoder: %v", typ, body, err)
			}
			if !reflect.DeepEqual(fast.Interface(), strict.Interface()) {
				t.Fatalf("%s %q:\nfast   %+v\nstrict %+v", typ, body, fast.Elem(), strict.Elem())
			}
		}
	})
}

// TestFastDecodeBatchSizes: the batch's entries and bodies are sized from
// its first entry; batches whose first entry is much shorter or longer
// than the rest still decode as the strict decoder decodes them.
func TestFastDecodeBatchSizes(t *testing.T) {
	long := `{"body":"` + strings.Repeat("x", 500) + `","tags":"t"}`
	for _, entries := range [][]string{
		{`{"body":"a"}`, long, long, long, `{"bodyBase64":"AAE="}`},
		{long, `{"body":"a"}`, `{"body":"b"}`, `{"body":"c"}`, `{"body":"d"}`, `{"body":"e"}`, `{"body":"f"}`},
		{long},
		slices.Repeat([]string{`{"body":"a"}`, `{"bodyBase64":"AAE=","keys":["k"]}`}, 600),
	} {
		body := `{"messages":[` + strings.Join(entries, ",") + `]}`
		var fast, strict PublishBatchRequest
		if !fastDecode([]byte(body), &fast) {
			t.Fatalf("fast path refused %.80s", body)
		}
		if err := jsonv2.Unmarshal([]byte(body), &strict, strictJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, strict) {
			t.Fatalf("%.80s: fast and strict differ", body)
		}
	}
}

// TestFastDecodeTakes checks the fast path takes the bodies mqbench and
// the SDKs send, so the benchmarks measure it.
func TestFastDecodeTakes(t *testing.T) {
	for _, c := range []struct {
		body string
		dst  any
	}{
		{`{"body":"order 17 created","tags":"created","keys":["order-17"],"properties":{"region":"eu"},"shardingKey":"customer-9"}`, new(PublishRequest)},
		{`{"messages":[{"body":"a"},{"bodyBase64":"AAE="}]}`, new(PublishBatchRequest)},
		{`{"receiptHandles":["AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg"]}`, new(AckRequest)},
	} {
		if !fastDecode([]byte(c.body), c.dst) {
			t.Errorf("fast path refused %s", c.body)
		}
	}
}
