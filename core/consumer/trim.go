package consumer

import (
	"slices"

	"github.com/mqgate/mqgate/core"
)

// Trimming: when SetPrefetch lowers the window (the gateway does for a
// group nobody received from for a while), each queue's pull goroutine
// gives back what it caches beyond the window and has not handed out, and
// rewinds its pull to the first offset given back. The trimmed offsets
// stay unfinished in the ProcessQueue (they hold the committed offset
// back and are not reported finished) until a pull brings them again;
// every other offset a rewound pull reads at or below queueOffsetMax is
// finished and skipped. So no message is lost or delivered twice, and an
// idle queue caches at most the window plus one pull batch.
//
//   - ORDERLY: the ProcessQueue's pending messages never reached the
//     listener; those above every offset ever taken are dropped directly.
//   - CONCURRENTLY: every pulled message was dispatched; a listener that
//     buffers (a Revoker, the gateway's inbox) gives back the unhanded ones
//     at or above the window's end through Delivery.Revoke. Without a
//     Revoker nothing is trimmed; the lower threshold still stops pulls.

// trim gives back what pr caches beyond the prefetch window (pull
// goroutine).
func (c *PushConsumer) trim(pr *pullRequest) {
	keep := int(c.prefetch.Load())
	if pr.orderly {
		pr.pq.trimPending(keep)
	} else if rv, ok := c.opts.Listener.(Revoker); ok {
		if from, ok := pr.pq.nthOffset(keep); ok {
			rv.Revoke(pr.mq, from)
		}
	}
	if first, ok := pr.pq.firstTrimmed(); ok && first < pr.nextOffset {
		pr.nextOffset = first
	}
}

// revokeMessage takes the message at m's offset out of the cache as a
// trimmed offset (Delivery.Revoke).
func (pq *ProcessQueue) revokeMessage(m *core.Message) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	i, found := slices.BinarySearchFunc(pq.msgs, m.QueueOffset, cmpOffset)
	if !found {
		return
	}
	pq.forgetLocked(i)
	pq.signalSpaceLocked()
}

// forgetLocked moves pq.msgs[i] to the trimmed offsets.
func (pq *ProcessQueue) forgetLocked(i int) {
	m := pq.msgs[i]
	pq.msgs = slices.Delete(pq.msgs, i, i+1)
	pq.count--
	pq.bytes -= int64(m.Size())
	pq.budgetAddLocked(-int64(m.Size()))
	j, _ := slices.BinarySearch(pq.trimmed, m.QueueOffset)
	pq.trimmed = slices.Insert(pq.trimmed, j, m.QueueOffset)
}

// trimPending (orderly) drops pending messages from the tail until at most
// keep are cached, never one that was taken before (a message made to
// consume again carries its reconsumeTimes, which a new pull would lose).
func (pq *ProcessQueue) trimPending(keep int) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	n := 0
	for pq.count > keep && len(pq.msgs) > 0 {
		i := len(pq.msgs) - 1
		if pq.tookAny && pq.msgs[i].QueueOffset <= pq.takenMax {
			break
		}
		pq.forgetLocked(i)
		n++
	}
	if n > 0 {
		pq.signalSpaceLocked()
	}
}

// nthOffset is the offset of the (n+1)-th cached message not being
// consumed: where a window of n ends.
func (pq *ProcessQueue) nthOffset(n int) (int64, bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if n < 0 || n >= len(pq.msgs) {
		return 0, false
	}
	return pq.msgs[n].QueueOffset, true
}

// firstTrimmed is the smallest trimmed offset.
func (pq *ProcessQueue) firstTrimmed() (int64, bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if len(pq.trimmed) == 0 {
		return 0, false
	}
	return pq.trimmed[0], true
}

// forgetTrimmedBelow drops trimmed offsets below off: they left the queue
// (retention; OFFSET_ILLEGAL moved the pull past them).
func (pq *ProcessQueue) forgetTrimmedBelow(off int64) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	i, _ := slices.BinarySearch(pq.trimmed, off)
	pq.trimmed = slices.Delete(pq.trimmed, 0, i)
}
