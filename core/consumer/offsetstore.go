package consumer

import (
	"cmp"
	"slices"
	"sync"

	"github.com/mqgate/mqgate/core"
)

// offsetStore is the client's in-memory position table (RocketMQ
// RemoteBrokerOffsetStore / LocalFileOffsetStore), extended to exact
// progress: per owned queue the offset below which everything is finished,
// plus the finished offsets above it (core.Progress). Those are not kept
// here message by message: they are read off the queue's ProcessQueue when
// a snapshot is taken (every offset at or above the offset and up to the
// highest one pulled that is no longer cached was finished), joined with
// the finished ranges read from the store when the queue was taken on and
// not yet pulled past. The service loop persists dirty queues through the
// group commit.
type offsetStore struct {
	mu      sync.Mutex // leaf: never held while a ProcessQueue's lock is taken
	table   map[core.MessageQueue]*queuePos
	dirty   map[core.MessageQueue]struct{}
	onDirty func() // the table went from clean to dirty
}

// queuePos is one queue's position.
type queuePos struct {
	off      int64
	epoch    uint64             // offset-reset generation read at start
	topicUID uint64             // topic incarnation read at start
	restored []core.OffsetRange // finished ranges read at start, above off
	src      *ProcessQueue      // the queue's cache (nil: offset only)
}

func newOffsetStore(onDirty func()) *offsetStore {
	return &offsetStore{table: map[core.MessageQueue]*queuePos{}, dirty: map[core.MessageQueue]struct{}{}, onDirty: onDirty}
}

// start takes on mq at p (read from the store, or decided now when dirty
// is set), with src as its cache.
func (s *offsetStore) start(mq core.MessageQueue, p core.Progress, src *ProcessQueue, dirty bool) {
	s.mu.Lock()
	s.table[mq] = &queuePos{off: p.Offset, epoch: p.Epoch, topicUID: p.TopicUID, restored: p.Done, src: src}
	delete(s.dirty, mq)
	s.mu.Unlock()
	if dirty {
		s.touch(mq)
	}
}

// update sets mq's offset; with increaseOnly it only moves forward
// (RocketMQ updateOffset(mq, offset, increaseOnly)).
func (s *offsetStore) update(mq core.MessageQueue, offset int64, increaseOnly bool) {
	s.mu.Lock()
	qp, ok := s.table[mq]
	if !ok {
		qp = &queuePos{off: offset}
		s.table[mq] = qp
	} else if qp.off == offset || (increaseOnly && offset < qp.off) {
		s.mu.Unlock()
		return
	}
	qp.off = offset
	wasClean := s.markLocked(mq)
	s.mu.Unlock()
	if wasClean && s.onDirty != nil {
		s.onDirty()
	}
}

// corrected sets mq's position to offset at epoch with nothing finished
// above it: an OFFSET_ILLEGAL correction the registry has stored.
func (s *offsetStore) corrected(mq core.MessageQueue, offset int64, epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	qp, ok := s.table[mq]
	if !ok {
		return
	}
	qp.off, qp.epoch, qp.restored = offset, epoch, nil
	delete(s.dirty, mq)
}

// finished records consume results of mq: the offset moves forward to
// offset, and the queue is dirty even when it did not move (messages above
// it were finished: the persisted ranges change).
func (s *offsetStore) finished(mq core.MessageQueue, offset int64) {
	s.mu.Lock()
	qp, ok := s.table[mq]
	if !ok {
		s.mu.Unlock()
		return
	}
	qp.off = max(qp.off, offset)
	wasClean := s.markLocked(mq)
	s.mu.Unlock()
	if wasClean && s.onDirty != nil {
		s.onDirty()
	}
}

// touch marks mq dirty.
func (s *offsetStore) touch(mq core.MessageQueue) {
	s.mu.Lock()
	if _, ok := s.table[mq]; !ok {
		s.mu.Unlock()
		return
	}
	wasClean := s.markLocked(mq)
	s.mu.Unlock()
	if wasClean && s.onDirty != nil {
		s.onDirty()
	}
}

func (s *offsetStore) markLocked(mq core.MessageQueue) (wasClean bool) {
	wasClean = len(s.dirty) == 0
	s.dirty[mq] = struct{}{}
	return wasClean
}

func (s *offsetStore) read(mq core.MessageQueue) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	qp, ok := s.table[mq]
	if !ok {
		return 0, false
	}
	return qp.off, true
}

// skipFinished drops from msgs those the store said were finished when the
// queue was taken on (acknowledged before a restart above the offset).
func (s *offsetStore) skipFinished(mq core.MessageQueue, msgs []*core.Message) []*core.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	qp, ok := s.table[mq]
	if !ok || len(qp.restored) == 0 {
		return msgs
	}
	p := core.Progress{Offset: -1, Done: qp.restored}
	out := msgs[:0:0]
	for _, m := range msgs {
		if !p.Contains(m.QueueOffset) {
			out = append(out, m)
		}
	}
	return out
}

// addFinished adds finished ranges learned late (settleLate) to mq's
// position if it is of the same epoch and topic incarnation, so its pull
// skips them.
func (s *offsetStore) addFinished(mq core.MessageQueue, epoch, topicUID uint64, rs []core.OffsetRange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	qp, ok := s.table[mq]
	if !ok || qp.epoch != epoch || (qp.topicUID != 0 && topicUID != 0 && qp.topicUID != topicUID) {
		return
	}
	qp.restored = mergeRanges(append(slices.Clone(qp.restored), rs...))
}

// mergeRanges sorts rs and joins the ranges that touch or overlap.
func mergeRanges(rs []core.OffsetRange) []core.OffsetRange {
	slices.SortFunc(rs, func(a, b core.OffsetRange) int { return cmp.Compare(a.From, b.From) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	return out
}

// snapshot is mq's position now. The cache is read after the table's lock
// is released: its finished offsets only grow, so a snapshot built from a
// slightly older offset is still exact.
func (s *offsetStore) snapshot(qp queuePos) core.Progress {
	p := core.Progress{Offset: qp.off, Epoch: qp.epoch, TopicUID: qp.topicUID}
	if qp.src != nil {
		p.Done = qp.src.finishedAbove(qp.off)
	}
	for _, r := range qp.restored {
		if r.To > qp.off {
			p.Done = append(p.Done, core.OffsetRange{From: max(r.From, qp.off), To: r.To})
		}
	}
	return p
}

// takeDirty returns the changed positions and marks them clean.
func (s *offsetStore) takeDirty() map[core.MessageQueue]core.Progress {
	s.mu.Lock()
	if len(s.dirty) == 0 {
		s.mu.Unlock()
		return nil
	}
	qps := make(map[core.MessageQueue]queuePos, len(s.dirty))
	for mq := range s.dirty {
		if qp, ok := s.table[mq]; ok {
			qps[mq] = *qp
			qp.restored = trimRanges(qp.restored, qp.off)
		}
	}
	clear(s.dirty)
	s.mu.Unlock()
	out := make(map[core.MessageQueue]core.Progress, len(qps))
	for mq, qp := range qps {
		out[mq] = s.snapshot(qp)
	}
	return out
}

// dirtyCount is how many queues wait to be persisted.
func (s *offsetStore) dirtyCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dirty)
}

// markDirty puts back positions whose persist failed.
func (s *offsetStore) markDirty(ps map[core.MessageQueue]core.Progress) {
	s.mu.Lock()
	for mq := range ps {
		if _, ok := s.table[mq]; ok {
			s.dirty[mq] = struct{}{}
		}
	}
	s.mu.Unlock()
}

// take returns mq's position and forgets it (RocketMQ removeOffset after
// the queue is persisted on drop).
func (s *offsetStore) take(mq core.MessageQueue) (core.Progress, bool) {
	s.mu.Lock()
	qp, ok := s.table[mq]
	delete(s.table, mq)
	delete(s.dirty, mq)
	s.mu.Unlock()
	if !ok {
		return core.Progress{}, false
	}
	return s.snapshot(*qp), true
}

// position returns mq's epoch and topic incarnation as read at start.
func (s *offsetStore) position(mq core.MessageQueue) (epoch, topicUID uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if qp, ok := s.table[mq]; ok {
		return qp.epoch, qp.topicUID
	}
	return 0, 0
}

// trimRanges drops what lies below off.
func trimRanges(rs []core.OffsetRange, off int64) []core.OffsetRange {
	i := 0
	for i < len(rs) && rs[i].To <= off {
		i++
	}
	return rs[i:]
}
