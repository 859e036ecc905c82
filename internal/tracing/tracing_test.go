package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"strings"
	"testing"
)

func TestEnabled(t *testing.T) {
	cases := []struct {
		env     map[string]string
		on      bool
		errWant string
	}{
		{env: nil, on: false},
		{env: map[string]string{"OTEL_SERVICE_NAME": "x"}, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, on: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, on: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, errWant: "only otlp"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, errWant: "http/protobuf"},
		// The signal-specific protocol wins over the general one.
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
		// A protocol alone does not turn tracing on.
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: false},
	}
	for _, c := range cases {
		on, err := Enabled(func(k string) string { return c.env[k] })
		switch {
		case c.errWant != "":
			if err == nil || !strings.Contains(err.Error(), c.errWant) {
				t.Errorf("%v: err %v, want one saying %q", c.env, err, c.errWant)
			}
		case err != nil || on != c.on:
			t.Errorf("%v: on %v err %v, want %v", c.env, on, err, c.on)
		}
	}
}

func TestParseFormat(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	sc, ok := Parse(tp, "a=1,b=2")
	if !ok || !sc.IsRemote() || !sc.IsSampled() {
		t.Fatalf("Parse: %v %v", sc, ok)
	}
	if p, s := Format(sc); p != tp || s != "a=1,b=2" {
		t.Fatalf("Format: %q %q", p, s)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
	if ValidState("not a list") || !ValidState("vendor=v1,other=x") {
		t.Error("ValidState")
	}
	if _, ok := Link("", ""); ok {
		t.Error("Link of nothing")
	}
}

// TestFormatIsInject: Format writes what the SDK's propagator writes.
func TestFormatIsInject(t *testing.T) {
	for _, in := range []struct{ parent, state string }{
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "a=1,b=2"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", ""},
	} {
		sc, ok := Parse(in.parent, in.state)
		if !ok {
			t.Fatal(in)
		}
		var c carrier
		propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
		if p, s := Format(sc); p != c.parent || s != c.state || p != in.parent {
			t.Errorf("Format %q %q, Inject %q %q", p, s, c.parent, c.state)
		}
	}
}

// parse00 (Parse's fast path) reads every traceparent as the propagator's
// Extract does: valid ones, and variants that break each rule.
func TestParse00IsExtract(t *testing.T) {
	const good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ins := []string{good, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-ff",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0A", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", good + "-", good[:54], "00_" + good[3:],
		"00-0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331_01",
		"00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333x-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x", "0"}
	for i := range len(good) { // every character replaced by one that breaks it
		b := []byte(good)
		b[i] = 'z'
		ins = append(ins, string(b))
	}
	for _, parent := range ins {
		for _, state := range []string{"", "a=1,b=2", "bad state"} {
			got, done := parse00(parent, state)
			if !done {
				continue // the propagator's to read
			}
			want := trace.SpanContextFromContext(propagator.Extract(context.Background(), &carrier{parent: parent, state: state}))
			if !got.Equal(want) || got.IsValid() != want.IsValid() {
				t.Errorf("parse00(%q, %q) = %v, Extract %v", parent, state, got, want)
			}
		}
	}
	for _, p := range []string{good, good[:54] + "0"} {
		if _, done := parse00(p, "a=1"); !done {
			t.Errorf("parse00(%q): not the fast path", p)
		}
	}
}
