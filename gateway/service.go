package gateway

import (
	"github.com/mqgate/mqgate/core"
)

// Service is what the HTTP layer calls to consume: the consume part of
// the seam (core.ConsumeService). Embedded implements it over the
// in-process push consumer.
type Service = core.ConsumeService

// The seam's types live in core; these aliases keep older references
// building until they are rewritten to core's names.
type (
	ReceiveRequest = core.ReceiveRequest
	Received       = core.Received
	HandleStatus   = core.HandleStatus
	HandleResult   = core.HandleResult
	GroupStatus    = core.GroupStatus
	ClientStatus   = core.ClientStatus
	QueueStatus    = core.QueueStatus
)

const (
	HandleOK      = core.HandleOK
	HandleExpired = core.HandleExpired
	HandleInvalid = core.HandleInvalid
)
