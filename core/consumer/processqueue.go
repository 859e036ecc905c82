package consumer

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
)

// ProcessQueue is the consumer-side cache of one owned queue (RocketMQ
// ProcessQueue): the pulled, unfinished messages in offset order
// (msgTreeMap), their count and bytes, queueOffsetMax, the dropped flag,
// the lock state and, for orderly consumption, the messages being consumed
// (consumingMsgOrderlyTreeMap).
//
// Counts and bytes cover both maps, as in RocketMQ: takeMessages moves
// messages without changing them; removeMessage and commit lower them.
type ProcessQueue struct {
	mu             sync.Mutex      // treeMapLock
	msgs           []*core.Message // msgTreeMap, ascending QueueOffset
	consuming      []*core.Message // consumingMsgOrderlyTreeMap, ascending
	count          int
	bytes          int64
	queueOffsetMax int64
	pulled         bool // queueOffsetMax is set
	// readThrough is where the pull has read to: every offset below it was
	// cached, or filtered out by the subscription, or finished before. An
	// emptied cache commits up to it, so a filtered-out tail read while a
	// message was in flight does not hold the offset back once that message
	// is finished (RocketMQ correctTagsOffset on NO_NEW_MSG, which the
	// parked pull would otherwise never run again).
	readThrough int64
	// readFrozen: the filter changed (UpdateConfig): what the old filter
	// read past is not to be committed past, so readThrough no longer
	// counts (the queue is replaced and read again with the new filter).
	readFrozen bool
	// trimmed are offsets at or below queueOffsetMax given back unconsumed
	// when the queue's prefetch window shrank (trim.go), ascending: they
	// are unfinished and are pulled again; any other offset at or below
	// queueOffsetMax that a pull brings again is finished and skipped.
	trimmed  []int64
	takenMax int64 // orderly: the highest offset TakeMessages ever took
	tookAny  bool
	space    chan struct{} // closed when messages leave; replaced then
	// spaceTaken: spaceChan handed out space since it was last replaced.
	// Until it has, nobody can wait on it, so a removal need not close
	// and replace it (an allocation per ack otherwise).
	spaceTaken bool
	budget     *CacheBudget // nil: none, or detached once dropped

	dropped      atomic.Bool
	locked       atomic.Bool
	lastLockTime atomic.Int64 // unix nanos
}

// NewProcessQueue returns an empty ProcessQueue.
func NewProcessQueue() *ProcessQueue {
	return &ProcessQueue{space: make(chan struct{})}
}

// PutMessage adds pulled messages not already cached and returns how many
// were new (RocketMQ putMessage).
func (pq *ProcessQueue) PutMessage(msgs []*core.Message) int {
	return len(pq.putMessages(msgs))
}

// putMessages is PutMessage returning the messages added: after a trim a
// pull reads again from the first trimmed offset, and only the trimmed
// offsets among what it reads are new.
func (pq *ProcessQueue) putMessages(msgs []*core.Message) []*core.Message {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.putLocked(msgs, true)
}

// putReserved is putMessages for a pull that reserved bytes from b: what
// it adds is taken from the reservation, the rest is returned (b nil:
// putMessages).
func (pq *ProcessQueue) putReserved(msgs []*core.Message, b *CacheBudget, reserved int64) []*core.Message {
	if b == nil {
		return pq.putMessages(msgs)
	}
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if pq.budget != b {
		// Dropped (detached) since the reservation: nothing is counted.
		b.release(reserved)
		return pq.putLocked(msgs, true)
	}
	added := pq.putLocked(msgs, false)
	var sum int64
	for _, m := range added {
		sum += int64(m.Size())
	}
	b.add(sum - reserved)
	return added
}

// putLocked adds msgs; account: count the added bytes in the budget.
func (pq *ProcessQueue) putLocked(msgs []*core.Message, account bool) []*core.Message {
	added := msgs[:0:0]
	for _, m := range msgs {
		if len(pq.trimmed) > 0 && m.QueueOffset <= pq.queueOffsetMax {
			i, found := slices.BinarySearch(pq.trimmed, m.QueueOffset)
			if !found {
				continue // finished while it was trimmed away (or cached)
			}
			pq.trimmed = slices.Delete(pq.trimmed, i, i+1)
		}
		if pq.insertLocked(m) {
			added = append(added, m)
			pq.count++
			pq.bytes += int64(m.Size())
			if account {
				pq.budgetAddLocked(int64(m.Size()))
			}
			if !pq.pulled || m.QueueOffset > pq.queueOffsetMax {
				pq.queueOffsetMax = m.QueueOffset
				pq.pulled = true
			}
		}
	}
	return added
}

// insertLocked puts m in msgs at its place; false if the offset is cached.
func (pq *ProcessQueue) insertLocked(m *core.Message) bool {
	n := len(pq.msgs)
	if n == 0 || pq.msgs[n-1].QueueOffset < m.QueueOffset {
		pq.msgs = append(pq.msgs, m) // the common case: pulls move forward
		return true
	}
	i, found := slices.BinarySearchFunc(pq.msgs, m.QueueOffset, cmpOffset)
	if found {
		return false
	}
	pq.msgs = slices.Insert(pq.msgs, i, m)
	return true
}

func cmpOffset(m *core.Message, off int64) int {
	switch {
	case m.QueueOffset < off:
		return -1
	case m.QueueOffset > off:
		return 1
	}
	return 0
}

// RemoveMessage removes finished messages and returns the offset to commit
// (RocketMQ removeMessage): -1 if nothing was cached before the call;
// queueOffsetMax+1, or the read-through offset if the pull read further
// (a filtered-out tail), if the cache becomes empty; otherwise the
// smallest offset still cached.
func (pq *ProcessQueue) RemoveMessage(msgs []*core.Message) int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	result := int64(-1)
	if len(pq.msgs) == 0 {
		return result
	}
	result = pq.queueOffsetMax + 1
	// Find every index first and close the holes in one pass: deleting
	// one by one moved the whole cached tail once per message, and acks
	// mostly remove from the head.
	var small [64]int
	idx := small[:0]
	for _, m := range msgs {
		if i, found := slices.BinarySearchFunc(pq.msgs, m.QueueOffset, cmpOffset); found {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	removed := len(idx)
	if removed == 1 && idx[0] < len(pq.msgs)/2 {
		// One message near the head (a receive client's ack, the usual
		// case): shift the few before it instead of the cached tail.
		i := idx[0]
		size := int64(pq.msgs[i].Size())
		pq.bytes -= size
		pq.budgetAddLocked(-size)
		copy(pq.msgs[1:i+1], pq.msgs[:i])
		pq.msgs[0] = nil
		pq.msgs = pq.msgs[1:]
	} else if removed > 0 {
		w := idx[0]
		for k, i := range idx {
			size := int64(pq.msgs[i].Size())
			pq.bytes -= size
			pq.budgetAddLocked(-size)
			end := len(pq.msgs)
			if k+1 < len(idx) {
				end = idx[k+1]
			}
			w += copy(pq.msgs[w:], pq.msgs[i+1:end])
		}
		clear(pq.msgs[w:])
		pq.msgs = pq.msgs[:w]
	}
	pq.count -= removed
	if len(pq.msgs) > 0 {
		result = pq.msgs[0].QueueOffset
	} else if len(pq.consuming) == 0 {
		result = max(result, pq.readThrough)
	}
	if len(pq.trimmed) > 0 {
		result = min(result, pq.trimmed[0]) // unfinished, pulled again
	}
	if removed > 0 {
		pq.signalSpaceLocked()
	}
	return result
}

// finishedAbove returns the finished offsets at or above from, up to the
// highest offset ever cached: those no longer cached in either map (they
// were acknowledged, sent back or skipped). The consume services remove a
// message only once it is finished, so this is exact; it is what lets a
// restart skip messages acknowledged above the committed offset.
func (pq *ProcessQueue) finishedAbove(from int64) []core.OffsetRange {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if !pq.pulled || pq.queueOffsetMax < from {
		return nil
	}
	var out []core.OffsetRange
	next := from
	if len(pq.trimmed) > 0 {
		// Trimmed offsets are unfinished: the gaps are what no map and
		// no trimmed offset holds.
		live := make([]int64, 0, len(pq.msgs)+len(pq.consuming)+len(pq.trimmed))
		for _, m := range pq.msgs {
			live = append(live, m.QueueOffset)
		}
		for _, m := range pq.consuming {
			live = append(live, m.QueueOffset)
		}
		live = append(live, pq.trimmed...)
		slices.Sort(live)
		for _, o := range live {
			if o > next {
				out = append(out, core.OffsetRange{From: next, To: o})
			}
			next = max(next, o+1)
		}
		if next <= pq.queueOffsetMax {
			out = append(out, core.OffsetRange{From: next, To: pq.queueOffsetMax + 1})
		}
		return out
	}
	gap := func(o int64) {
		if o < next {
			return
		}
		if o > next {
			out = append(out, core.OffsetRange{From: next, To: o})
		}
		next = o + 1
	}
	i, j := 0, 0
	for i < len(pq.msgs) || j < len(pq.consuming) {
		if j >= len(pq.consuming) || (i < len(pq.msgs) && pq.msgs[i].QueueOffset < pq.consuming[j].QueueOffset) {
			gap(pq.msgs[i].QueueOffset)
			i++
		} else {
			gap(pq.consuming[j].QueueOffset)
			j++
		}
	}
	if next <= pq.queueOffsetMax {
		out = append(out, core.OffsetRange{From: next, To: pq.queueOffsetMax + 1})
	}
	return out
}

// TakeMessages moves up to n of the first cached messages to the consuming
// map and returns them (RocketMQ takeMessages, orderly).
func (pq *ProcessQueue) TakeMessages(n int) []*core.Message {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	n = min(n, len(pq.msgs))
	if n == 0 {
		return nil
	}
	taken := slices.Clone(pq.msgs[:n])
	pq.takenMax = max(pq.takenMax, taken[n-1].QueueOffset)
	pq.tookAny = true
	pq.msgs = slices.Delete(pq.msgs, 0, n)
	pq.consuming = append(pq.consuming, taken...)
	slices.SortFunc(pq.consuming, func(a, b *core.Message) int { return cmpOffset(a, b.QueueOffset) })
	return taken
}

// Commit finishes every message in the consuming map and returns the offset
// after the last of them, or -1 if none was being consumed (RocketMQ
// commit, orderly); when nothing stays cached, the read-through offset if
// the pull read further (a filtered-out tail).
func (pq *ProcessQueue) Commit() int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if len(pq.consuming) == 0 {
		return -1
	}
	offset := pq.consuming[len(pq.consuming)-1].QueueOffset + 1
	pq.count -= len(pq.consuming)
	for _, m := range pq.consuming {
		pq.bytes -= int64(m.Size())
		pq.budgetAddLocked(-int64(m.Size()))
	}
	pq.consuming = pq.consuming[:0]
	if len(pq.msgs) == 0 && len(pq.trimmed) == 0 {
		offset = max(offset, pq.readThrough)
	}
	pq.signalSpaceLocked()
	return offset
}

// advanceRead records that the pull read everything below off (pull
// goroutine, after the read's messages are cached): the read-through
// offset only moves forward.
func (pq *ProcessQueue) advanceRead(off int64) {
	pq.mu.Lock()
	if !pq.readFrozen {
		pq.readThrough = max(pq.readThrough, off)
	}
	pq.mu.Unlock()
}

// freezeRead forgets the read-through offset for good: the reads behind
// it used a filter the group no longer has.
func (pq *ProcessQueue) freezeRead() {
	pq.mu.Lock()
	pq.readFrozen, pq.readThrough = true, 0
	pq.mu.Unlock()
}

// MakeMessageToConsumeAgain moves msgs from the consuming map back into the
// cache, to be taken again (RocketMQ makeMessageToCosumeAgain). A message
// is matched by offset, so a copy with a new ReconsumeTimes replaces the
// cached one.
func (pq *ProcessQueue) MakeMessageToConsumeAgain(msgs []*core.Message) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range msgs {
		i, found := slices.BinarySearchFunc(pq.consuming, m.QueueOffset, cmpOffset)
		if !found {
			continue
		}
		old := pq.consuming[i]
		pq.consuming = slices.Delete(pq.consuming, i, i+1)
		pq.bytes += int64(m.Size() - old.Size())
		pq.budgetAddLocked(int64(m.Size() - old.Size()))
		pq.insertLocked(m)
	}
}

// ReplaceMessage swaps the cached message at m's offset for m (a copy with
// a new ReconsumeTimes); false if the offset is not cached.
func (pq *ProcessQueue) ReplaceMessage(m *core.Message) bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	i, found := slices.BinarySearchFunc(pq.msgs, m.QueueOffset, cmpOffset)
	if found {
		pq.msgs[i] = m
	}
	return found
}

// MaxSpan is the distance between the first and last cached offsets
// (RocketMQ getMaxSpan), the concurrent flow-control measure.
func (pq *ProcessQueue) MaxSpan() int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if len(pq.msgs) == 0 {
		return 0
	}
	return pq.msgs[len(pq.msgs)-1].QueueOffset - pq.msgs[0].QueueOffset
}

// Count and Bytes are the cached messages (both maps) and their body size.
func (pq *ProcessQueue) Count() int {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.count
}

// Bytes is the body size of the cached messages.
func (pq *ProcessQueue) Bytes() int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.bytes
}

// Empty reports whether nothing is cached in either map and nothing
// trimmed waits to be pulled again: everything pulled is finished.
func (pq *ProcessQueue) Empty() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return len(pq.msgs) == 0 && len(pq.consuming) == 0 && len(pq.trimmed) == 0
}

// Pending returns the number of cached messages not being consumed.
func (pq *ProcessQueue) Pending() int {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return len(pq.msgs)
}

// Dropped reports whether the queue was taken away from this client.
func (pq *ProcessQueue) Dropped() bool { return pq.dropped.Load() }

// SetDropped marks the queue dropped and wakes a pull waiting for space.
func (pq *ProcessQueue) SetDropped() {
	if pq.dropped.Swap(true) {
		return
	}
	pq.mu.Lock()
	if pq.budget != nil {
		// Detach: what is still cached is abandoned to the new owner.
		pq.budget.add(-pq.bytes)
		pq.budget.register(-1)
		pq.budget = nil
	}
	pq.signalSpaceLocked()
	pq.mu.Unlock()
}

// attachBudget puts the queue's bytes under b (before anything is cached).
func (pq *ProcessQueue) attachBudget(b *CacheBudget) {
	if b == nil {
		return
	}
	pq.mu.Lock()
	pq.budget = b
	b.register(1)
	b.add(pq.bytes)
	pq.mu.Unlock()
}

// budgetRef returns the budget the queue is under (nil: none) and the
// bytes it caches.
func (pq *ProcessQueue) budgetRef() (*CacheBudget, int64) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.budget, pq.bytes
}

func (pq *ProcessQueue) budgetAddLocked(n int64) {
	if pq.budget != nil {
		pq.budget.add(n)
	}
}

// Locked reports whether this client holds the engine's orderly lock.
func (pq *ProcessQueue) Locked() bool { return pq.locked.Load() }

func (pq *ProcessQueue) setLocked(ok bool, now time.Time) {
	pq.locked.Store(ok)
	if ok {
		pq.lastLockTime.Store(now.UnixNano())
	}
}

// spaceChan returns a channel closed the next time messages leave the
// queue (or it is dropped): the pull service waits on it under flow control
// instead of re-checking every 50 ms.
func (pq *ProcessQueue) spaceChan() <-chan struct{} {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.spaceTaken = true
	return pq.space
}

// wake releases pulls waiting for space so they re-check their limits.
func (pq *ProcessQueue) wake() {
	pq.mu.Lock()
	pq.signalSpaceLocked()
	pq.mu.Unlock()
}

func (pq *ProcessQueue) signalSpaceLocked() {
	if !pq.spaceTaken {
		return
	}
	close(pq.space)
	pq.space = make(chan struct{})
	pq.spaceTaken = false
}
