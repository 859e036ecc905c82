package gateway

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/groups"
	"github.com/mqgate/mqgate/core/store"
)

// orderedParks is the real registry, noting what the feeder had been
// answered when a parked id was stored.
type orderedParks struct {
	*groups.Registry
	answeredBefore func() int
	seen           []int
}

func (o *orderedParks) AddParkedIDs(ctx context.Context, group string, mq core.MessageQueue, key string, ids []string) error {
	o.seen = append(o.seen, o.answeredBefore())
	return o.Registry.AddParkedIDs(ctx, group, mq, key, ids)
}

// A park is stored when it answers; a parked message's id is stored before
// its dead-letter nack is sent; a resume whose release fails leaves the
// key parked, in memory and in the store; one that succeeds forgets it in
// both, after handing over the ids.
func TestParksStoredBeforeTheyAct(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, err := groups.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, _, err := reg.Put(orderly("g")); err != nil {
		t.Fatal(err)
	}
	var f *feeder
	parks := &orderedParks{Registry: reg, answeredBefore: func() int { return len(f.got()) }}
	r := newRig(t, Options{Parks: parks}, orderly("g"))
	f = r.client("g", "gw1")
	stored := func() []groups.Park {
		t.Helper()
		all, err := reg.Parks()
		if err != nil {
			t.Fatal(err)
		}
		return all["g"]
	}

	if _, err := r.gw.ParkKey("g", "", q(0), ""); err != nil {
		t.Fatal(err)
	}
	if ps := stored(); len(ps) != 1 || ps[0].Queue != q(0) || len(ps[0].IDs) != 0 {
		t.Fatalf("stored after park: %+v", ps)
	}
	f.deliver(q(0), true, 0, 1)
	if got := f.got(); len(got) != 1 || got[0].ok || got[0].level != -1 {
		t.Fatalf("answers %+v, want the head dead-lettered", got)
	}
	if !slices.Equal(parks.seen, []int{0}) {
		t.Fatalf("answers sent when the id was stored: %v, want [0]", parks.seen)
	}
	if ps := stored(); len(ps) != 1 || !slices.Equal(ps[0].IDs, []string{"t-0-0"}) {
		t.Fatalf("stored ids %+v", ps)
	}

	boom := errors.New("redrive failed")
	if _, err := r.gw.ResumeKey("g", "", q(0), "", func([]string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("resume with a failing release: %v", err)
	}
	if ps := stored(); len(ps) != 1 {
		t.Fatalf("a failed resume dropped the stored park: %+v", ps)
	}
	if bl, _ := r.gw.Blocked("g", ""); len(bl) != 1 || bl[0].State != core.StateParked || bl[0].Attempts != 1 {
		t.Fatalf("after a failed resume: %+v", bl)
	}
	var released []string
	en, err := r.gw.ResumeKey("g", "", q(0), "", func(ids []string) error {
		released = ids
		if len(stored()) != 1 {
			t.Error("the park was forgotten before its ids were released")
		}
		return nil
	})
	if err != nil || en.State != core.StateResumed || !slices.Equal(released, []string{"t-0-0"}) {
		t.Fatalf("resume: %+v %v, released %v", en, err, released)
	}
	if ps := stored(); len(ps) != 0 {
		t.Fatalf("stored after resume: %+v", ps)
	}
	if bl, _ := r.gw.Blocked("g", ""); len(bl) != 0 {
		t.Fatalf("blocked after resume: %+v", bl)
	}
}
