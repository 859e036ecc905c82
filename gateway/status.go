package gateway

import (
	"cmp"
	"slices"

	"github.com/mqgate/mqgate/core"
)

func sortClients(cs []core.ClientStatus) {
	slices.SortFunc(cs, func(a, b core.ClientStatus) int { return cmp.Compare(a.ClientID, b.ClientID) })
	for _, c := range cs {
		slices.SortFunc(c.Queues, func(a, b core.QueueStatus) int {
			if a.Queue.Less(b.Queue) {
				return -1
			}
			if b.Queue.Less(a.Queue) {
				return 1
			}
			return 0
		})
	}
}
