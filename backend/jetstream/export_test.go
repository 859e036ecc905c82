package jetstream

// LaneCounts is how many coalesced batches this instance sent and how
// many publishes they carried (coalesce.go).
func (b *Backend) LaneCounts() (batches, publishes uint64) {
	return b.laneBatches.Load(), b.lanePublishes.Load()
}
