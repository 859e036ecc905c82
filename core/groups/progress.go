package groups

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/mqgate/mqgate/core"
)

// A queue's committed position (core.Progress) is stored as
//
//	version(1)=2 uvarint(epoch) uvarint(topicUID) varint(offset)
//	uvarint(n) n × (uvarint(from-prevTo) uvarint(to-from))
//
// with prevTo starting at offset: finished ranges above the offset, delta
// encoded (a few bytes each). A legacy value is the bare offset as 8
// big-endian bytes (first byte 0: offsets stay far below 2^56); it decodes
// as epoch 0, topic uid 0 (any incarnation) and no ranges.
const progressVersion = 2

// maxStoredRanges bounds what one record may hold. A client's ranges are
// bounded by its ProcessQueue (at most its cached messages); a record over
// this came from a bug or a damaged file and is refused.
const maxStoredRanges = 1 << 16

var errBadProgress = errors.New("groups: malformed offset record")

func encodeProgress(p core.Progress) []byte {
	b := make([]byte, 0, 32+6*len(p.Done))
	b = append(b, progressVersion)
	b = binary.AppendUvarint(b, p.Epoch)
	b = binary.AppendUvarint(b, p.TopicUID)
	b = binary.AppendVarint(b, p.Offset)
	b = binary.AppendUvarint(b, uint64(len(p.Done)))
	prev := p.Offset
	for _, r := range p.Done {
		b = binary.AppendUvarint(b, uint64(r.From-prev))
		b = binary.AppendUvarint(b, uint64(r.To-r.From))
		prev = r.To
	}
	return b
}

func decodeProgress(v []byte) (core.Progress, error) {
	var p core.Progress
	if len(v) == 8 && v[0] == 0 {
		p.Offset = int64(binary.BigEndian.Uint64(v))
		return p, nil
	}
	if len(v) < 5 || v[0] != progressVersion {
		return p, errBadProgress
	}
	rest := v[1:]
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return x, true
	}
	var ok bool
	if p.Epoch, ok = uv(); !ok {
		return p, errBadProgress
	}
	if p.TopicUID, ok = uv(); !ok {
		return p, errBadProgress
	}
	off, n := binary.Varint(rest)
	if n <= 0 || off < 0 {
		return p, errBadProgress
	}
	rest = rest[n:]
	p.Offset = off
	cnt, ok := uv()
	if !ok || cnt > maxStoredRanges {
		return p, errBadProgress
	}
	prev := off
	for i := uint64(0); i < cnt; i++ {
		gap, ok1 := uv()
		length, ok2 := uv()
		if !ok1 || !ok2 || length == 0 || gap > 1<<62 || length > 1<<62 {
			return p, errBadProgress
		}
		from := prev + int64(gap)
		to := from + int64(length)
		if from < prev || to <= from {
			return p, errBadProgress
		}
		p.Done = append(p.Done, core.OffsetRange{From: from, To: to})
		prev = to
	}
	if len(rest) != 0 {
		return p, errBadProgress
	}
	return p, nil
}

// normalizeProgress sorts and merges p.Done, drops what lies below
// p.Offset, and moves p.Offset over a finished range that starts at it.
func normalizeProgress(p core.Progress) core.Progress {
	if len(p.Done) == 0 {
		return p
	}
	rs := slices.Clone(p.Done)
	slices.SortFunc(rs, func(a, b core.OffsetRange) int {
		switch {
		case a.From < b.From:
			return -1
		case a.From > b.From:
			return 1
		}
		return 0
	})
	out := rs[:0]
	for _, r := range rs {
		if r.To <= r.From {
			continue
		}
		if n := len(out); n > 0 && r.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	// Trim below the offset and absorb a range that touches it.
	i := 0
	for i < len(out) && out[i].From <= p.Offset {
		p.Offset = max(p.Offset, out[i].To)
		i++
	}
	p.Done = nil
	if i < len(out) {
		p.Done = slices.Clone(out[i:])
	}
	return p
}

// mergeProgress combines a stored position with a newer write of the same
// epoch and topic incarnation: everything either calls finished is
// finished (a client's view only grows; a send-back's settle adds one
// offset that the client learns of a moment later).
func mergeProgress(old, upd core.Progress) core.Progress {
	m := core.Progress{Offset: max(old.Offset, upd.Offset), Epoch: upd.Epoch, TopicUID: max(old.TopicUID, upd.TopicUID)}
	m.Done = append(slices.Clone(old.Done), upd.Done...)
	return normalizeProgress(m)
}
