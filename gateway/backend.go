package gateway

import (
	"context"
	"errors"

	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// EmbeddedBackend is the embedded engine as one backend (api.Backend):
// the bbolt engine (topics, publish, lookup, DLQ), the push-consumer
// gateway (receive, settle) and the group admin (groups, offsets and
// reset), each unchanged. It only names them together and closes them in
// order.
type EmbeddedBackend struct {
	*engine.Engine
	*Embedded
	*Admin
	Registry *groups.Registry
}

// Close shuts the gateway down (clients persist their offsets), then the
// registry, then the engine.
func (b EmbeddedBackend) Close(ctx context.Context) error {
	return errors.Join(b.Embedded.Close(ctx), b.Registry.Close(), b.Engine.Close())
}
