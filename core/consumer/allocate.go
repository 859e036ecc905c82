package consumer

import "github.com/mqgate/mqgate/core"

// AllocateStrategy splits the sorted queues of a topic among the sorted
// client ids of a group and returns currentCID's share (RocketMQ
// AllocateMessageQueueStrategy). It must be a pure function: every client
// computes the same split from the same inputs.
type AllocateStrategy func(currentCID string, mqAll []core.MessageQueue, cidAll []string) []core.MessageQueue

// AllocateAveragely gives each client a contiguous block; the first
// len(mqAll)%len(cidAll) clients get one more (RocketMQ
// AllocateMessageQueueAveragely, the default).
func AllocateAveragely(currentCID string, mqAll []core.MessageQueue, cidAll []string) []core.MessageQueue {
	index := indexOf(cidAll, currentCID)
	if index < 0 || len(mqAll) == 0 {
		return nil
	}
	n, c := len(mqAll), len(cidAll)
	mod := n % c
	var averageSize int
	switch {
	case n <= c:
		averageSize = 1
	case mod > 0 && index < mod:
		averageSize = n/c + 1
	default:
		averageSize = n / c
	}
	startIndex := index*averageSize + mod
	if mod > 0 && index < mod {
		startIndex = index * averageSize
	}
	span := min(averageSize, n-startIndex)
	out := make([]core.MessageQueue, 0, max(span, 0))
	for i := 0; i < span; i++ {
		out = append(out, mqAll[(startIndex+i)%n])
	}
	return out
}

// AllocateAveragelyByCircle deals the queues to clients in turn, like
// cards (RocketMQ AllocateMessageQueueAveragelyByCircle).
func AllocateAveragelyByCircle(currentCID string, mqAll []core.MessageQueue, cidAll []string) []core.MessageQueue {
	index := indexOf(cidAll, currentCID)
	if index < 0 {
		return nil
	}
	var out []core.MessageQueue
	for i := index; i < len(mqAll); i += len(cidAll) {
		out = append(out, mqAll[i])
	}
	return out
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
