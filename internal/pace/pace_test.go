package pace

import "testing"

// A rate bounds the chunk to a tenth of a second's worth (at least 1,
// at most the maximum); no rate takes the maximum and never waits; a
// closed stop ends a wait that the rate would make.
func TestChunkAndStop(t *testing.T) {
	for _, c := range []struct{ rate, max, want int }{{0, 256, 256}, {2500, 256, 250}, {5, 256, 1}, {1_000_000, 256, 256}} {
		if got := New(c.rate, c.max).Chunk(); got != c.want {
			t.Errorf("New(%d, %d).Chunk() = %d, want %d", c.rate, c.max, got, c.want)
		}
	}
	stop := make(chan struct{})
	p := New(0, 8)
	p.Took(1000)
	if !p.Wait(8, stop) {
		t.Error("no rate: Wait refused")
	}
	p = New(1, 8) // one a second: the second move waits about a second
	defer p.Stop()
	if !p.Wait(1, stop) {
		t.Fatal("the first chunk waited")
	}
	p.Took(1)
	close(stop)
	if p.Wait(1, stop) {
		t.Error("Wait after stop closed answered true")
	}
}
