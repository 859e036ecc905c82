package store

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// The read barrier. The writer commits a group to bbolt before the
// syncer has made its log-ahead record durable (writer.go, wal.go), and
// Store.Update commits before its checkpoint has synced the file: for
// that moment a bbolt read transaction sees state a power cut would take
// back. The gates (gate.go) hide the appends to queues and the commit
// log from readers; the barrier covers everything else a View reads: an
// accessor of state written outside those gates waits, before it reads,
// until the transactions its view holds that wrote that state are
// durable. So an answer built in a View never reports an idempotency
// record, a group's config or offset, a job or a topic that a crash
// could lose; the caller waits at most for the sync under way.
//
// What waits is narrowed by area: the store's own state besides queue
// appends (topics, queue minima, the trash, the records set aside), and
// each registered bucket. The writer notes, before bbolt commits a
// group, the areas its ops and hooks wrote (a topic created by an op,
// the buckets and typed writes its hooks recorded); Store.Update notes
// those its function wrote the same way. A reader of area a in a view
// at txid V then needs the durable txid to reach min(V, the last txid
// that wrote a): a pull that reads only topics and queues does not wait
// for the acks committed beside it.
type durability struct {
	on      bool          // the log-ahead runs: commits are not durable at once
	durable atomic.Uint64 // every transaction up to this txid is durable
	any     atomic.Uint64 // the last Store.Update whose areas are unknown
	own     atomic.Uint64 // the last group that wrote the store's own state
	// buckets holds the last writing txid of each registered bucket, by
	// name; built at Open from the registrations and read-only after.
	buckets map[string]*atomic.Uint64
	// logged is the txid of the last group record appended to the log,
	// voids counts the records voided since (walLog): the syncer marks
	// logged durable after an fdatasync only if no record was voided
	// meanwhile (a voided txid is used again by the next commit).
	logged, voids atomic.Uint64
	// empty is the txid of the last commit that wrote nothing readers
	// see (a checkpoint's freelist commit, checkpoint.go): durable as soon
	// as the one before it is, though no sync of the syncer may follow it
	// for a while (no batch carries it).
	empty atomic.Uint64

	mu      sync.Mutex
	cond    sync.Cond
	waiters atomic.Int32
	broken  atomic.Bool // the log failed: what is not durable never will be
}

func newDurability() *durability {
	d := &durability{buckets: map[string]*atomic.Uint64{}}
	d.cond.L = &d.mu
	owners.Lock()
	for name := range owners.m {
		d.buckets[name] = new(atomic.Uint64)
	}
	owners.Unlock()
	return d
}

// mark records that every transaction up to txid is durable and wakes the
// readers waiting for it.
func (d *durability) mark(txid uint64) {
	for {
		cur := d.durable.Load()
		if txid <= cur {
			return
		}
		if d.durable.CompareAndSwap(cur, txid) {
			break
		}
	}
	if e := d.empty.Load(); e == txid+1 {
		d.mark(e)
		return
	}
	d.wake()
}

// wroteNothing notes that txid committed nothing a reader sees: it is
// durable with the transaction before it.
func (d *durability) wroteNothing(txid uint64) {
	d.empty.Store(txid)
	if d.durable.Load()+1 >= txid { // the one before is durable already
		d.mark(txid)
	}
}

// fail wakes every waiting reader for good: the log is broken, so what
// is not durable now never will be and the views answer the log's error.
func (d *durability) fail() {
	d.broken.Store(true)
	d.wake()
}

func (d *durability) wake() {
	if d.waiters.Load() == 0 {
		return
	}
	d.mu.Lock()
	d.cond.Broadcast()
	d.mu.Unlock()
}

// await blocks until need is durable, or the log is broken.
func (d *durability) await(need uint64) {
	if d.durable.Load() >= need {
		return
	}
	d.mu.Lock()
	d.waiters.Add(1) // before the check: mark's load of waiters follows its store
	for d.durable.Load() < need && !d.broken.Load() {
		d.cond.Wait()
	}
	d.waiters.Add(-1)
	d.mu.Unlock()
}

// areaNeed is the txid a reader of the area last written at w must see
// durable in a view at txid view.
func (d *durability) areaNeed(view uint64, w *atomic.Uint64) uint64 {
	return min(view, max(w.Load(), d.any.Load()))
}

// wroteGroup notes, before bbolt commits group txid, the areas it wrote:
// the store's own state (ownState) and the top-level buckets its hooks'
// recordings name.
func (d *durability) wroteGroup(txid uint64, ownState bool, reqs []*Request) {
	if ownState {
		d.own.Store(txid)
	}
	for _, r := range reqs {
		if r.err != nil {
			continue
		}
		for _, name := range r.rec.tops {
			if w := d.buckets[string(name)]; w != nil {
				w.Store(txid)
			} else {
				d.own.Store(txid) // not a registered bucket: be safe
			}
		}
		if r.rec.typedWrites {
			d.own.Store(txid)
		}
	}
}

// wroteUpdate notes, before bbolt commits a Store.Update at txid, the
// areas its recorder saw it write; one that noted none may have written
// anything a recorder does not see, so every area waits for it.
func (d *durability) wroteUpdate(txid uint64, rec *recorder) {
	if len(rec.tops) == 0 && !rec.typedWrites {
		d.any.Store(txid)
		return
	}
	d.wroteGroup(txid, false, []*Request{{rec: *rec}})
}

// awaitOwn waits, in View, until the view's writes to the store's own
// state are durable.
func (tx ReadTx) awaitOwn() {
	if d := tx.dur; d != nil && d.on {
		d.await(d.areaNeed(uint64(tx.tx.ID()), &d.own))
	}
}

// awaitBucket waits, in View, until the view's writes to the registered
// bucket name are durable.
func (tx ReadTx) awaitBucket(name []byte) {
	d := tx.dur
	if d == nil || !d.on {
		return
	}
	w := d.buckets[string(name)]
	if w == nil {
		w = &d.own
	}
	d.await(d.areaNeed(uint64(tx.tx.ID()), w))
}

// lost reports whether a view holds commits the broken log will never
// make durable: its answers must not be given.
func (d *durability) lost(view uint64) bool {
	return d != nil && d.on && d.broken.Load() && d.durable.Load() < view
}

// topOf is the top-level bucket name of a recorder path (a run of
// length-prefixed names, appendString).
func topOf(path []byte) []byte {
	n, k := binary.Uvarint(path)
	if k <= 0 || uint64(len(path)-k) < n {
		return nil
	}
	return path[k : k+int(n)]
}

// noteTop adds the top-level bucket of path to the recorder's set.
func (r *recorder) noteTop(path []byte) {
	top := topOf(path)
	for _, t := range r.tops {
		if bytes.Equal(t, top) {
			return
		}
	}
	r.tops = append(r.tops, top)
}
