package jetstream

// LaneCounts is how many coalesced batches this instance sent and how
// many publishes they carried (coalesce.go).
func (b *Backend) LaneCounts() (batches, publishes uint64) {
	return b.laneBatches.Load(), b.lanePublishes.Load()
}

// OverrideCounts is how many lease override reads settles made and
// skipped (overrides.go).
func (b *Backend) OverrideCounts() (reads, skips uint64) {
	return b.overrideReads.Load(), b.overrideSkips.Load()
}

// ResumeWatches is how many paused groups this instance watches and how
// many receives wait on those watches (pause.go).
func (b *Backend) ResumeWatches() (watches, waiters int) {
	b.resumes.mu.Lock()
	defer b.resumes.mu.Unlock()
	for _, rw := range b.resumes.m {
		watches++
		waiters += rw.waiters
	}
	return watches, waiters
}
