package core_test

import (
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/limitstest"
)

// TestValidatePut: core's own check names the field of each publish of
// the shared suite one past a limit, and takes each one at the limit.
func TestValidatePut(t *testing.T) {
	limitstest.CheckPuts(t, 0, func(msgs []core.PutMessage) error {
		return core.ValidatePut(msgs, time.Now(), 0)
	})
}

// TestReceiveRequestValidate, likewise for receives.
func TestReceiveRequestValidate(t *testing.T) {
	limitstest.CheckReceives(t, func(req core.ReceiveRequest) error { return req.Validate() })
}

// TestValidateWords: the words are the API's (api's hand checks say the
// same), so a client sees one sentence per rule whichever layer refused.
func TestValidateWords(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{core.ValidatePut([]core.PutMessage{{Body: []byte("x"), Tags: string(make([]byte, core.MaxTagsLen+1))}}, time.Now(), 0),
			"invalid: tags: must be at most 128 characters"},
		{core.ValidatePut(make([]core.PutMessage, core.MaxBatch+1), time.Now(), 0), "invalid: messages: must have at most 1000 items"},
		{(&core.ReceiveRequest{MaxMessages: 33}).Validate(), "invalid: maxMessages: must be ≤ 32"},
		{(&core.ReceiveRequest{MaxMessages: 1, Wait: time.Minute}).Validate(), "invalid: waitSeconds: must be ≤ 30"},
		{core.ValidateLease(0), "invalid: invisibleSeconds: must be ≥ 1"},
		{core.ValidateNack(-2, ""), "invalid: delayLevel: must be ≥ -1"},
		{core.ValidateHandles(nil), "invalid: receiptHandles: must have at least 1 items"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%v, want %q", c.err, c.want)
		}
	}
}

// TestValidatePutAllocs: checking a valid batch allocates nothing (it
// runs on every publish of both backends; field names are built only for
// a failing field).
func TestValidatePutAllocs(t *testing.T) {
	msgs := make([]core.PutMessage, 100)
	for i := range msgs {
		msgs[i] = core.PutMessage{Body: []byte("body"), BodyIsText: true, Tags: "t", Keys: []string{"k1", "k2"},
			Properties: map[string]string{"a": "b"}, ShardingKey: "s", DeliverAt: time.Now().Add(time.Hour)}
	}
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() {
		if err := core.ValidatePut(msgs, now, 0); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ValidatePut of a valid batch: %v allocations, want 0", n)
	}
}
