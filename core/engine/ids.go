package engine

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// newID is a message id (core.NewMessageID).
func newID(now time.Time) string { return core.NewMessageID(now) }

// newIDs fills ids with message ids (core.NewMessageIDs).
func newIDs(now time.Time, ids []string) { core.NewMessageIDs(now, ids) }
