package gateway

// ackedSet is the lease table's tombstones: which of the most recently
// granted lease sequence numbers ended acked, so that acking a handle
// again answers ok (and changes nothing) after its lease was forgotten.
// Lease numbers are granted in order, one per hand-out, so one bit per
// number in a ring over the last size numbers is enough: memory is
// size/8 bytes at most (8 MiB by default), allocated as numbers are
// granted, and no timer or sweep is needed.
//
// A number outside the window (more than size leases were granted after
// it) reads as not acked: its handle answers expired. That bounds the
// promise "acking twice answers ok twice" to the last size hand-outs
// (defaultAckedWindow: about 1.9 h at 10,000 messages/s).
type ackedSet struct {
	size uint64   // ring size in bits, a power of two
	bits []uint64 // grows to size/64 words
	hi   uint64   // the last number granted; the window is (hi-size, hi]
}

// defaultAckedWindow is how many of the last granted leases keep their
// acked tombstone (2^26 bits: 8 MiB).
const defaultAckedWindow = 1 << 26

func newAckedSet(size uint64) *ackedSet {
	if size < 64 || size&(size-1) != 0 {
		panic("gateway: ackedSet size must be a power of two >= 64")
	}
	return &ackedSet{size: size}
}

// grant records that seq (hi+1) was granted: its bit is cleared, which
// forgets seq-size.
func (s *ackedSet) grant(seq uint64) {
	s.hi = seq
	w, b := s.pos(seq)
	if w >= len(s.bits) {
		if w >= cap(s.bits) { // grow by doubling, never past size/64 words
			nb := make([]uint64, len(s.bits), min(max(2*cap(s.bits), 64), int(s.size/64)))
			copy(nb, s.bits)
			s.bits = nb
		}
		s.bits = s.bits[:w+1]
	}
	s.bits[w] &^= b
}

// inWindow reports whether seq's bit is still its own.
func (s *ackedSet) inWindow(seq uint64) bool {
	return seq <= s.hi && s.hi-seq < s.size && seq > 0
}

// set marks seq acked (nothing if it already left the window).
func (s *ackedSet) set(seq uint64) {
	if !s.inWindow(seq) {
		return
	}
	w, b := s.pos(seq)
	s.bits[w] |= b
}

// has reports whether seq ended acked and is still remembered.
func (s *ackedSet) has(seq uint64) bool {
	if !s.inWindow(seq) {
		return false
	}
	w, b := s.pos(seq)
	return w < len(s.bits) && s.bits[w]&b != 0
}

func (s *ackedSet) pos(seq uint64) (int, uint64) {
	i := seq & (s.size - 1)
	return int(i >> 6), 1 << (i & 63)
}

// bytes is the memory the set holds.
func (s *ackedSet) bytes() int { return 8 * cap(s.bits) }
