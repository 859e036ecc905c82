package consumer

import (
	"maps"

	"github.com/mqgate/mqgate/core"
)

// withReason returns m as it goes to sendMessageBack: a shallow copy whose
// system properties carry the failure's reason (core.PropLastReason), or
// none when reason is "" (a reason of an earlier failure is not carried
// forward by a failure without one). m itself is shared and read-only.
func withReason(m *core.Message, reason string) *core.Message {
	if _, had := m.SysProps[core.PropLastReason]; !had && reason == "" {
		return m
	}
	cp := *m
	cp.SysProps = maps.Clone(m.SysProps)
	if cp.SysProps == nil {
		cp.SysProps = map[string]string{}
	}
	if reason == "" {
		delete(cp.SysProps, core.PropLastReason)
	} else {
		cp.SysProps[core.PropLastReason] = reason
	}
	return &cp
}
