package engine

import (
	"encoding/binary"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Purge marks. Queues are append-only, so purging a message of a user
// topic marks it: uid(8)+qid(2)+offset(8) → empty, in bucketRedriven
// beside the DLQ's redrive and purge marks (uid(8)+offset(8)); a uid
// belongs to one topic, so the two kinds never meet, and deleting a topic
// sweeps both by uid prefix (trash.go). GetMessages skips a marked unit
// as if the filter refused it (its offset still advances), so a purged
// message is never delivered again; lookups by id or key still find it
// until retention removes it.

func purgedKey(uid uint64, qid int, off int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 18), uid)
	k = binary.BigEndian.AppendUint16(k, uint16(qid))
	return binary.BigEndian.AppendUint64(k, uint64(off))
}

// purgeSet answers whether units of one queue are purged.
type purgeSet struct {
	b      *store.Bucket
	prefix []byte
}

// purgedIn returns the purge marks of a user topic's queue, or nil when
// it has none (one seek: the common case costs nothing more per unit).
func purgedIn(tx store.ReadTx, topic string, uid uint64, qid int) *purgeSet {
	if core.IsSystemTopic(topic) {
		return nil
	}
	b := tx.Bucket(bucketRedriven)
	prefix := purgedKey(uid, qid, 0)[:10]
	k, _ := b.Cursor().Seek(prefix)
	if k == nil || len(k) != 18 || string(k[:10]) != string(prefix) {
		return nil
	}
	return &purgeSet{b: b, prefix: prefix}
}

func (p *purgeSet) has(off int64) bool {
	return p != nil && p.b.Get(binary.BigEndian.AppendUint64(append([]byte(nil), p.prefix...), uint64(off))) != nil
}
