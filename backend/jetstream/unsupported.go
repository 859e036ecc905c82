package jetstream

import (
	"context"

	"github.com/mqgate/mqgate/core"
)

// The parts of core.Backend this backend does not offer yet. Each answers
// core.Unsupported (503 with a detail naming it); docs/jetstream.md lists
// them. The API reaches them like any other method: there is no optional
// interface to probe.

const backendName = "jetstream"

// Diagnose implements core.OperatorService: not on JetStream (an empty
// receive then carries no reason).
func (b *Backend) Diagnose(group, consumerID string) (core.Diagnosis, error) {
	return core.Diagnosis{}, core.Unsupported("explaining an empty receive", backendName)
}

// PauseGroup implements core.GroupService: not on JetStream yet.
func (b *Backend) PauseGroup(ctx context.Context, name string, paused bool) (core.Group, error) {
	return core.Group{}, core.Unsupported("pausing groups", backendName)
}

// CountMatching implements core.DeadLetterService: filter jobs are not on
// JetStream.
func (b *Backend) CountMatching(kind, name string, f core.MessageFilter) (int64, error) {
	return 0, core.Unsupported("redrive and purge by filter", backendName)
}

// StartJob implements core.DeadLetterService: filter jobs are not on
// JetStream.
func (b *Backend) StartJob(kind, name string, f core.MessageFilter, ratePerSecond int) (core.Job, error) {
	return core.Job{}, core.Unsupported("redrive and purge by filter", backendName)
}

// GetJob implements core.DeadLetterService: filter jobs are not on
// JetStream.
func (b *Backend) GetJob(id string) (core.Job, error) {
	return core.Job{}, core.Unsupported("redrive and purge by filter", backendName)
}
