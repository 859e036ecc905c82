package core

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
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
	var b [16]byte
	ms := uint64(now.UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	copy(b[6:10], idProcess[:])
	n := idCounter.Add(1)
	b[10], b[11], b[12], b[13], b[14], b[15] = byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return idEncoding.EncodeToString(b[:])
}
