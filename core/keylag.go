package core

import (
	"slices"
	"strings"
)

// KeyLagTally groups unfinished messages into KeyLag rows, one per queue
// and sharding key (depth, oldest), as every backend counts them.
type KeyLagTally struct {
	at   map[keyLagRef]int
	rows []KeyLag
}

type keyLagRef struct {
	mq  MessageQueue
	key string
}

// Add counts m, an unfinished message of queue mq.
func (t *KeyLagTally) Add(mq MessageQueue, m *Message) {
	if t.at == nil {
		t.at = map[keyLagRef]int{}
	}
	ref := keyLagRef{mq, m.ShardingKey}
	i, ok := t.at[ref]
	if !ok {
		i = len(t.rows)
		t.at[ref] = i
		t.rows = append(t.rows, KeyLag{Queue: mq, ShardingKey: m.ShardingKey, Oldest: m.BornAt, OldestID: m.UserID()})
	}
	k := &t.rows[i]
	k.Depth++
	if m.BornAt.Before(k.Oldest) {
		k.Oldest, k.OldestID = m.BornAt, m.UserID()
	}
}

// Rows are the rows counted, in the order their keys were first seen.
func (t *KeyLagTally) Rows() []KeyLag { return t.rows }

// SortKeyLags orders rows the way every backend answers them: oldest
// first, then by sharding key, then by queue; and keeps at most limit
// (0: all).
func SortKeyLags(rows []KeyLag, limit int) []KeyLag {
	slices.SortFunc(rows, func(a, b KeyLag) int {
		if c := a.Oldest.Compare(b.Oldest); c != 0 {
			return c
		}
		if c := strings.Compare(a.ShardingKey, b.ShardingKey); c != 0 {
			return c
		}
		if a.Queue.Less(b.Queue) {
			return -1
		}
		if b.Queue.Less(a.Queue) {
			return 1
		}
		return 0
	})
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	return rows
}
