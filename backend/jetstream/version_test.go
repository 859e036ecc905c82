package jetstream

import (
	"testing"
	"time"
)

func TestCheckServerVersion(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"2.12.0", true}, {"2.15.2", true}, {"v2.12.1", true}, {"3.0.0", true}, {"2.12.0-beta.1", true},
		{"2.11.9", false}, {"2.10.0", false}, {"1.99.99", false}, {"", false}, {"garbage", false},
	} {
		if err := CheckServerVersion(c.v); (err == nil) != c.ok {
			t.Errorf("CheckServerVersion(%q) = %v, want ok=%v", c.v, err, c.ok)
		}
	}
}

func TestLeaseRoundTrip(t *testing.T) {
	reply := "$JS.ACK.MQ_t.g.3.42.17.1700000000000000000.5"
	l := lease{sseq: 42, delivered: 3, group: "g", reply: reply, deadline: time.UnixMilli(1700000000000)}
	got, ok := decodeLease(encodeLease(l))
	if !ok || got.sseq != 42 || got.delivered != 3 || got.meta.stream != "MQ_t" || got.meta.consumer != "g" || got.meta.dseq != 17 {
		t.Fatalf("decodeLease = %+v, %v", got, ok)
	}
	// A reply subject that disagrees with the handle's numbers is refused.
	l.sseq = 43
	if _, ok := decodeLease(encodeLease(l)); ok {
		t.Fatal("mismatched sequence accepted")
	}
	// v2 ack subjects (domain, account hash) parse too.
	if m, ok := parseAck("$JS.ACK.dom.ACCHASH.MQ_t.g~q1.1.9.9.1700000000000000000.0.tok"); !ok || m.stream != "MQ_t" || m.consumer != "g~q1" || m.sseq != 9 {
		t.Fatalf("v2 parse = %+v %v", m, ok)
	}
}
