package engine

import "github.com/mqgate/mqgate/core"

// setLastReason gives a send-back copy the reason its caller put on the
// failed message (core.PropLastReason, clipped), or none: the stored
// original may still carry the reason of an earlier failure.
func setLastReason(cp, failed *core.Message) {
	if r := core.ClipReason(failed.SysProps[core.PropLastReason]); r != "" {
		cp.SysProps[core.PropLastReason] = r
		return
	}
	delete(cp.SysProps, core.PropLastReason)
}
