package core

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"sync/atomic"
	"time"
)

// Message ids: 16 bytes — 6 bytes of unix ms, 4 bytes chosen at random per
// process, 6 bytes of a per-process counter starting at a random value —
// in lower-case base32hex without padding: 26 URL-safe characters that sort
// by accept time (so an id index is appended to, nearly in order) and are
// unique across processes and restarts without coordination (RocketMQ's
// MessageClientIDSetter uses the same idea: ip+pid+time+counter). Every
// backend issues them, so ids look the same whichever engine stores them.
var (
	idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)
	idProcess  [4]byte
	idCounter  atomic.Uint64
)

func init() {
	var seed [8]byte
	_, _ = rand.Read(idProcess[:])
	_, _ = rand.Read(seed[:])
	idCounter.Store(binary.BigEndian.Uint64(seed[:]))
}

// NewMessageID returns a new message id accepted at now.
func NewMessageID(now time.Time) string {
	var ids [1]string
	NewMessageIDs(now, ids[:])
	return ids[0]
}

// NewMessageIDs fills ids with new message ids accepted at now, with
// consecutive counters in order. They share one string: a batch of n ids costs one
// allocation, not n.
func NewMessageIDs(now time.Time, ids []string) {
	var raw [16]byte
	var text [idLen]byte
	ms := uint64(now.UnixMilli())
	raw[0], raw[1], raw[2], raw[3], raw[4], raw[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	copy(raw[6:10], idProcess[:])
	// The counters of the batch are reserved at once; consecutive values
	// still differ in their low 48 bits, as n separate calls' would.
	last := idCounter.Add(uint64(len(ids)))
	var all strings.Builder
	all.Grow(idLen * len(ids))
	for i := range ids {
		n := last - uint64(len(ids)-1-i)
		raw[10], raw[11], raw[12], raw[13], raw[14], raw[15] = byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		idEncoding.Encode(text[:], raw[:])
		all.Write(text[:])
	}
	s := all.String()
	for i := range ids {
		ids[i] = s[i*idLen : (i+1)*idLen]
	}
}

// idLen is the length of a message id: 16 bytes in base32 without padding.
const idLen = 26
