package consumer

import (
	"sync"

	"github.com/mqgate/mqgate/core"
)

// offsetStore is the client's in-memory offset table (RocketMQ
// RemoteBrokerOffsetStore / LocalFileOffsetStore): updated on every
// consume result, persisted by the service loop when dirty.
type offsetStore struct {
	mu      sync.Mutex // leaf
	table   map[core.MessageQueue]int64
	dirty   map[core.MessageQueue]struct{}
	onDirty func() // the table went from clean to dirty
}

func newOffsetStore(onDirty func()) *offsetStore {
	return &offsetStore{table: map[core.MessageQueue]int64{}, dirty: map[core.MessageQueue]struct{}{}, onDirty: onDirty}
}

// update sets mq's offset; with increaseOnly it only moves forward
// (RocketMQ updateOffset(mq, offset, increaseOnly)).
func (s *offsetStore) update(mq core.MessageQueue, offset int64, increaseOnly bool) {
	s.mu.Lock()
	old, ok := s.table[mq]
	if ok && (old == offset || (increaseOnly && offset < old)) {
		s.mu.Unlock()
		return
	}
	s.table[mq] = offset
	wasClean := len(s.dirty) == 0
	s.dirty[mq] = struct{}{}
	s.mu.Unlock()
	if wasClean && s.onDirty != nil {
		s.onDirty()
	}
}

// set records an offset that is already persisted (start offsets read
// from the store, taken resets): not dirty.
func (s *offsetStore) set(mq core.MessageQueue, offset int64) {
	s.mu.Lock()
	s.table[mq] = offset
	delete(s.dirty, mq)
	s.mu.Unlock()
}

func (s *offsetStore) read(mq core.MessageQueue) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off, ok := s.table[mq]
	return off, ok
}

// takeDirty returns the changed offsets and marks them clean.
func (s *offsetStore) takeDirty() map[core.MessageQueue]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dirty) == 0 {
		return nil
	}
	out := make(map[core.MessageQueue]int64, len(s.dirty))
	for mq := range s.dirty {
		out[mq] = s.table[mq]
	}
	clear(s.dirty)
	return out
}

// markDirty puts back offsets whose persist failed.
func (s *offsetStore) markDirty(offsets map[core.MessageQueue]int64) {
	s.mu.Lock()
	for mq := range offsets {
		if _, ok := s.table[mq]; ok {
			s.dirty[mq] = struct{}{}
		}
	}
	s.mu.Unlock()
}

// take returns mq's offset and forgets it (RocketMQ removeOffset after
// the queue is persisted on drop).
func (s *offsetStore) take(mq core.MessageQueue) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off, ok := s.table[mq]
	delete(s.table, mq)
	delete(s.dirty, mq)
	return off, ok
}
