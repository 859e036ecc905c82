package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWebhookOrderlyNeverOvertakes: an ORDERLY push group whose receiver
// fails one request in five (503). For every sharding key, no message is POSTed
// before the previous one of that key got a 2xx, and every message ends
// acknowledged, in publish order.
func TestWebhookOrderlyNeverOvertakes(t *testing.T) {
	const keys, perKey = 8, 24
	s := startPushServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/ord", map[string]any{"queues": 4}), http.StatusCreated)

	var mu sync.Mutex
	acked := map[string]int{} // key → highest sequence acknowledged (-1: none)
	var violations []string
	calls := 0
	rc := newReceiver(t, func(r *http.Request, msgs []hookMsg) (int, http.Header) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		fail := calls%5 == 0
		// A batch carries a queue's messages in order: an earlier message
		// of the key in the same request counts as acknowledged with it.
		upTo := map[string]int{}
		for _, m := range msgs {
			k, seq := splitOrd(m.Body)
			last, ok := upTo[k]
			if !ok {
				if last, ok = acked[k]; !ok {
					last = -1
				}
			}
			if seq > last+1 {
				violations = append(violations, fmt.Sprintf("%s#%d pushed while #%d was the last acknowledged", k, seq, last))
			}
			if seq == last+1 {
				upTo[k] = seq
			}
		}
		if !fail {
			for k, seq := range upTo {
				acked[k] = seq
			}
		}
		if fail {
			return http.StatusServiceUnavailable, nil
		}
		return http.StatusOK, nil
	})
	putPushGroup(t, s, "ord", "ord", map[string]any{"url": rc.srv.URL, "secret": hookSecret, "batchSize": 4},
		map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 1000})
	var msgs []map[string]any
	for i := range keys * perKey {
		k := "k" + strconv.Itoa(i%keys)
		msgs = append(msgs, map[string]any{"body": k + "#" + strconv.Itoa(i/keys), "shardingKey": k})
	}
	if r := s.do(t, "POST", "/v1/topics/ord/messages/batch", map[string]any{"messages": msgs}); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	checkFor(t, 40*time.Second, 50*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		for i := range keys {
			if got := acked["k"+strconv.Itoa(i)]; got != perKey-1 {
				return fmt.Errorf("key k%d: last acknowledged #%d of %d", i, got, perKey-1)
			}
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatalf("%d ordering violations, e.g. %s", len(violations), violations[0])
	}
	if calls < 8 {
		t.Fatalf("only %d requests: failures not exercised", calls)
	}
	rc.checkSignatures(t)
}

// splitOrd parses "k3#17" into its key and sequence.
func splitOrd(body string) (string, int) {
	k, n, _ := strings.Cut(body, "#")
	seq, _ := strconv.Atoi(n)
	return k, seq
}
