package gateway

import (
	"github.com/mqgate/mqgate/core"
)

// keyLagger is the optional part of PushClient that reports per-key lag
// (*consumer.PushConsumer).
type keyLagger interface {
	KeyLags() []core.KeyLag
}

// KeyLags lists the CLUSTERING ORDERLY group's ordering keys with
// unfinished messages, oldest first, at most limit (per-key lag: what the
// group's client has pulled and not finished). EConflict for other groups.
func (e *Embedded) KeyLags(group string, limit int) ([]core.KeyLag, error) {
	g, err := e.opts.Groups.Get(group)
	if err != nil {
		return nil, err
	}
	if g.MessageModel == core.Broadcasting {
		return nil, core.Errorf(core.EConflict, "group %q is BROADCASTING: per-key lag is kept for CLUSTERING ORDERLY groups", group)
	}
	c, _, err := e.orderlyClient(group, "")
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, nil
	}
	kl, ok := c.pc.(keyLagger)
	if !ok {
		return nil, core.Errorf(core.EUnavailable, "per-key lag is not available on this backend")
	}
	return core.SortKeyLags(kl.KeyLags(), limit), nil
}
