// Package limitstest is the shared suite of the request limits
// (core/limits.go): the same bad publishes, receives and settles run
// against every backend, which must refuse each of them with exactly the
// Error core's checks give, and accept the requests just within each
// limit. It imports only core and the standard library; only tests
// import it.
package limitstest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// long is n characters of two bytes each: the limits count characters.
func long(n int) string { return strings.Repeat("é", n) }

func text(s string) core.PutMessage { return core.PutMessage{Body: []byte(s), BodyIsText: true} }

// Put is one publish of the suite: Field is the field its Error names,
// "" for a publish within every limit.
type Put struct {
	Name  string
	Msgs  []core.PutMessage
	Field string
}

// Puts are the publishes of the suite. The accepted ones are at each
// limit; the refused ones one past it.
func Puts() []Put {
	with := func(f func(m *core.PutMessage)) []core.PutMessage {
		m := text("x")
		f(&m)
		return []core.PutMessage{m}
	}
	props := func(n int) map[string]string {
		p := map[string]string{}
		for i := range n {
			p[fmt.Sprint("p", i)] = "v"
		}
		return p
	}
	keys := func(n int) []string {
		k := make([]string, n)
		for i := range k {
			k[i] = fmt.Sprint("k", i)
		}
		return k
	}
	batch := func(n, size int) []core.PutMessage {
		ms := make([]core.PutMessage, n)
		for i := range ms {
			ms[i] = core.PutMessage{Body: make([]byte, size)}
		}
		return ms
	}
	return []Put{
		{"no messages", nil, "messages"},
		{"batch over MaxBatch", batch(core.MaxBatch+1, 1), "messages"},
		{"batch bodies over MaxMessageSize in all", batch(2, core.MaxMessageSize/2+1), "messages"},
		{"body over MaxMessageSize", []core.PutMessage{{Body: make([]byte, core.MaxMessageSize+1)}}, "bodyBase64"},
		{"empty text body", []core.PutMessage{{BodyIsText: true}}, "body"},
		{"empty body in a batch", []core.PutMessage{text("ok"), {}}, "messages[1].bodyBase64"},
		{"tags at the limit", with(func(m *core.PutMessage) { m.Tags = long(core.MaxTagsLen) }), ""},
		{"tags over", with(func(m *core.PutMessage) { m.Tags = long(core.MaxTagsLen + 1) }), "tags"},
		{"tags with ||", with(func(m *core.PutMessage) { m.Tags = "a||b" }), "tags"},
		{"keys at the limit", with(func(m *core.PutMessage) { m.Keys = keys(core.MaxKeys) }), ""},
		{"too many keys", with(func(m *core.PutMessage) { m.Keys = keys(core.MaxKeys + 1) }), "keys"},
		{"key at the limit", with(func(m *core.PutMessage) { m.Keys = []string{long(core.MaxKeyLen)} }), ""},
		{"key over", with(func(m *core.PutMessage) { m.Keys = []string{"a", long(core.MaxKeyLen + 1)} }), "keys[1]"},
		{"empty key", with(func(m *core.PutMessage) { m.Keys = []string{""} }), "keys[0]"},
		{"properties at the limit", with(func(m *core.PutMessage) { m.Properties = props(core.MaxProperties) }), ""},
		{"too many properties", with(func(m *core.PutMessage) { m.Properties = props(core.MaxProperties + 1) }), "properties"},
		{"property name over", with(func(m *core.PutMessage) {
			m.Properties = map[string]string{long(core.MaxPropertyNameLen + 1): "v"}
		}), "properties[" + long(core.MaxPropertyNameLen+1) + "]"},
		{"property value at the limit", with(func(m *core.PutMessage) {
			m.Properties = map[string]string{"p": long(core.MaxPropertyValueLen)}
		}), ""},
		{"property value over", with(func(m *core.PutMessage) {
			m.Properties = map[string]string{"p": long(core.MaxPropertyValueLen + 1)}
		}), "properties[p]"},
		{"empty property name", with(func(m *core.PutMessage) { m.Properties = map[string]string{"": "v"} }), "properties[]"},
		{"sharding key at the limit", with(func(m *core.PutMessage) { m.ShardingKey = long(core.MaxKeyLen) }), ""},
		{"sharding key over", with(func(m *core.PutMessage) { m.ShardingKey = long(core.MaxKeyLen + 1) }), "shardingKey"},
		{"negative delay level", with(func(m *core.PutMessage) { m.DelayLevel = -1 }), "delayLevel"},
		{"delay level and deliverAt", with(func(m *core.PutMessage) {
			m.DelayLevel, m.DeliverAt = 1, time.Now().Add(time.Hour)
		}), "delayLevel"},
		{"deliverAt past the max delay", with(func(m *core.PutMessage) {
			m.DeliverAt = time.Now().Add(core.MaxDelay + time.Hour) // past any test's MaxDelay too
		}), "deliverAt"},
		{"deduplicationId at the limit", with(func(m *core.PutMessage) {
			m.DedupID = strings.Repeat("d", core.MaxDedupIDLen)
		}), ""},
		{"deduplicationId over", with(func(m *core.PutMessage) {
			m.DedupID = strings.Repeat("d", core.MaxDedupIDLen+1)
		}), "deduplicationId"},
		{"deduplicationId not printable", with(func(m *core.PutMessage) { m.DedupID = "a\nb" }), "deduplicationId"},
		{"traceparent over", with(func(m *core.PutMessage) {
			m.TraceParent = strings.Repeat("0", core.MaxTraceParentLen+1)
		}), "traceparent"},
		{"tracestate over", with(func(m *core.PutMessage) {
			m.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			m.TraceState = strings.Repeat("a", core.MaxTraceStateLen+1)
		}), "tracestate"},
		{"tracestate without traceparent", with(func(m *core.PutMessage) { m.TraceState = "a=b" }), "tracestate"},
	}
}

// CheckPuts runs Puts through put (a backend's Put on a topic that
// exists; maxDelay is its MaxDelay option, 0 for the default): each
// refused publish answers exactly ValidatePut's Error (code, field and
// words), each accepted one no error.
func CheckPuts(t *testing.T, maxDelay time.Duration, put func(msgs []core.PutMessage) error) {
	t.Helper()
	for _, c := range Puts() {
		got := put(c.Msgs)
		if c.Field == "" {
			if got != nil {
				t.Errorf("%s: refused: %v", c.Name, got)
			}
			continue
		}
		want := core.ValidatePut(c.Msgs, time.Now(), maxDelay)
		var we *core.Error
		if !asError(want, &we) || we.Field != c.Field {
			t.Errorf("%s: core.ValidatePut gives %v, want an error on %s", c.Name, want, c.Field)
			continue
		}
		var ge *core.Error
		if !asError(got, &ge) || !reflect.DeepEqual(ge, we) {
			t.Errorf("%s: %v, want %v (core.ValidatePut's)", c.Name, got, want)
		}
	}
}

// Receive is one receive of the suite (Field "" for an accepted one).
type Receive struct {
	Name  string
	Req   core.ReceiveRequest
	Field string
}

// Receives are the receives of the suite.
func Receives() []Receive {
	return []Receive{
		{"maxMessages 0", core.ReceiveRequest{}, "maxMessages"},
		{"maxMessages at the limit", core.ReceiveRequest{MaxMessages: core.MaxReceiveMessages}, ""},
		{"maxMessages over", core.ReceiveRequest{MaxMessages: core.MaxReceiveMessages + 1}, "maxMessages"},
		{"negative wait", core.ReceiveRequest{MaxMessages: 1, Wait: -time.Second}, "waitSeconds"},
		{"wait over", core.ReceiveRequest{MaxMessages: 1, Wait: core.MaxWait + time.Second}, "waitSeconds"},
		{"lease under", core.ReceiveRequest{MaxMessages: 1, Invisible: core.MinInvisible / 2}, "invisibleSeconds"},
		{"lease at the limit", core.ReceiveRequest{MaxMessages: 1, Invisible: core.MaxInvisible}, ""},
		{"lease over", core.ReceiveRequest{MaxMessages: 1, Invisible: core.MaxInvisible + time.Second}, "invisibleSeconds"},
		{"bad consumerId", core.ReceiveRequest{MaxMessages: 1, ConsumerID: "a b"}, "consumerId"},
	}
}

// CheckReceives runs Receives through receive (a backend's Receive on a
// pull group that exists, with nothing to receive), as CheckPuts does.
func CheckReceives(t *testing.T, receive func(req core.ReceiveRequest) error) {
	t.Helper()
	for _, c := range Receives() {
		got := receive(c.Req)
		if c.Field == "" {
			if got != nil {
				t.Errorf("%s: refused: %v", c.Name, got)
			}
			continue
		}
		want := c.Req.Validate()
		var we, ge *core.Error
		if !asError(want, &we) || we.Field != c.Field {
			t.Errorf("%s: Validate gives %v, want an error on %s", c.Name, want, c.Field)
			continue
		}
		if !asError(got, &ge) || !reflect.DeepEqual(ge, we) {
			t.Errorf("%s: %v, want %v (ReceiveRequest.Validate's)", c.Name, got, want)
		}
	}
}

// Settler is the settle side of a backend (core.ConsumeService's ack, nack
// and extend, with the nack's reason).
type Settler interface {
	Ack(handles []string) error
	NackReason(handles []string, delayLevel int, reason string) error
	Extend(handles []string, invisible time.Duration) error
}

// CheckSettles sends refused acks, nacks and extends to s: each answers
// exactly core's Error.
func CheckSettles(t *testing.T, s Settler) {
	t.Helper()
	h := []string{"not-a-handle"}
	many := make([]string, core.MaxHandles+1)
	for i := range many {
		many[i] = "h"
	}
	for _, c := range []struct {
		name      string
		got, want error
	}{
		{"ack of no handles", s.Ack(nil), core.ValidateHandles(nil)},
		{"ack of too many handles", s.Ack(many), core.ValidateHandles(many)},
		{"nack level under -1", s.NackReason(h, -2, ""), core.ValidateNack(-2, "")},
		{"nack reason over", s.NackReason(h, 0, long(core.MaxReasonLength+1)), core.ValidateNack(0, long(core.MaxReasonLength+1))},
		{"nack of too many handles", s.NackReason(many, 0, ""), core.ValidateHandles(many)},
		{"extend under the lease", s.Extend(h, 0), core.ValidateLease(0)},
		{"extend over the lease", s.Extend(h, core.MaxInvisible+time.Second), core.ValidateLease(core.MaxInvisible + time.Second)},
		{"extend of too many handles", s.Extend(many, time.Minute), core.ValidateHandles(many)},
	} {
		var ge, we *core.Error
		if !asError(c.want, &we) {
			t.Errorf("%s: core's check gives %v, want an error", c.name, c.want)
			continue
		}
		if !asError(c.got, &ge) || !reflect.DeepEqual(ge, we) {
			t.Errorf("%s: %v, want %v (core's)", c.name, c.got, c.want)
		}
	}
}

func asError(err error, target **core.Error) bool { return errors.As(err, target) }
