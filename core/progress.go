package core

// OffsetRange is the queue offsets [From, To).
type OffsetRange struct {
	From, To int64
}

// Progress is a consumer's position in one queue: every offset below
// Offset is finished (acknowledged, sent back or filtered out), and so is
// every offset in Done (sorted, disjoint, all at or above Offset). Done is
// what lets a restart skip messages acknowledged above the oldest
// unfinished one (RocketMQ keeps only Offset and replays them).
type Progress struct {
	Offset int64
	Done   []OffsetRange
	// Epoch is the offset-reset generation the position belongs to: a
	// reset starts a new epoch, and a write carrying an older one is
	// dropped (it predates the reset).
	Epoch uint64
	// TopicUID is the topic incarnation (Topic.UID) the position belongs
	// to; a position of an older incarnation counts as absent.
	TopicUID uint64
}

// Contains reports whether offset o is finished according to p.
func (p Progress) Contains(o int64) bool {
	if o < p.Offset {
		return true
	}
	// Done is short (bounded by the consumer's cache); a linear scan with
	// an early exit is what a binary search would save nothing on.
	for _, r := range p.Done {
		if o < r.From {
			return false
		}
		if o < r.To {
			return true
		}
	}
	return false
}
