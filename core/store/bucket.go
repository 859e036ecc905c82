package store

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// A BucketName is a top-level bucket of the file that Register granted to
// one owner package; only through it does a package reach that bucket
// (ReadTx.Bucket, Tx.CreateBucketIfNotExists). Its zero value names no
// bucket.
type BucketName struct{ name []byte }

// String is the bucket's name in the file.
func (n BucketName) String() string { return string(n.name) }

// owners maps each registered bucket name to the package that owns it.
var owners = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// Register grants the top-level bucket name to owner (the owning
// package's path, for messages). Call it from a package-level variable,
// so that every owner has registered before any store opens. Each name
// has one owner: registering a name twice, or a name of the store's own
// (the "mq." prefix), is a programming error and panics at start-up.
// Registering creates nothing; the owner creates its bucket
// (Tx.CreateBucketIfNotExists) when it opens.
func Register(owner, name string) BucketName {
	owners.Lock()
	defer owners.Unlock()
	switch prev, taken := owners.m[name]; {
	case name == "":
		panic(fmt.Sprintf("store: %s registers an empty bucket name", owner))
	case strings.HasPrefix(name, "mq."):
		panic(fmt.Sprintf("store: %s registers bucket %q: the mq. buckets are the store's own", owner, name))
	case taken:
		panic(fmt.Sprintf("store: bucket %q registered by %s and again by %s", name, prev, owner))
	}
	owners.m[name] = owner
	return BucketName{name: []byte(name)}
}

// Registered lists the registered buckets as "name (owner)", by name.
func Registered() []string {
	owners.Lock()
	defer owners.Unlock()
	out := make([]string, 0, len(owners.m))
	for name, owner := range owners.m {
		out = append(out, name+" ("+owner+")")
	}
	slices.Sort(out)
	return out
}

// Bucket returns the registered bucket n, or nil when it does not exist.
func (tx ReadTx) Bucket(n BucketName) *Bucket {
	tx.awaitBucket(n.name) // in View: what the view holds of it is durable (durable.go)
	return wrapBucket(tx.tx.Bucket(n.name), tx.rec, nil, n.name)
}

// BucketUnsynced is Bucket without the read barrier: in View it may show
// writes a power cut could still take back. It is for a look-up whose
// "not found" is a safe answer (an idempotency record not found is looked
// up again inside the group commit); call AwaitDurable before an answer
// depends on what it found.
func (tx ReadTx) BucketUnsynced(n BucketName) *Bucket {
	return wrapBucket(tx.tx.Bucket(n.name), tx.rec, nil, n.name)
}

// AwaitDurable waits, in View, until what the view holds of bucket n is
// durable (elsewhere it returns at once).
func (tx ReadTx) AwaitDurable(n BucketName) { tx.awaitBucket(n.name) }

// CreateBucket creates the registered bucket n; it fails when n exists.
func (tx Tx) CreateBucket(n BucketName) (*Bucket, error) {
	b, err := tx.tx.CreateBucket(n.name)
	if err == nil {
		tx.rec.bucketOp(walCreateBucket, nil, n.name)
	}
	return wrapBucket(b, tx.rec, nil, n.name), err
}

// CreateBucketIfNotExists creates the registered bucket n unless it exists.
func (tx Tx) CreateBucketIfNotExists(n BucketName) (*Bucket, error) {
	b, err := tx.tx.CreateBucketIfNotExists(n.name)
	if err == nil {
		tx.rec.bucketOp(walCreateBucketIfNotExists, nil, n.name)
	}
	return wrapBucket(b, tx.rec, nil, n.name), err
}

// DeleteBucket deletes the registered bucket n and everything in it.
func (tx Tx) DeleteBucket(n BucketName) error {
	err := tx.tx.DeleteBucket(n.name)
	if err == nil {
		tx.rec.bucketOp(walDeleteBucket, nil, n.name)
	}
	return err
}

// wrapBucket makes the Bucket for b, named name inside the bucket at
// parentPath (nil: top level); nil when b is nil. Inside the group commit
// it carries the transaction's recorder rec, so its writes reach the
// log-ahead (wal.go).
func wrapBucket(b *bolt.Bucket, rec *recorder, parentPath, name []byte) *Bucket {
	if b == nil {
		return nil
	}
	nb := &Bucket{b: b, rec: rec}
	if rec != nil {
		nb.path = childPath(parentPath, name)
	}
	return nb
}

// Bucket is a registered bucket, or a bucket nested in one: bbolt's
// Bucket with the methods owner packages use. Keys and values read from
// it are valid only inside the transaction; a value passed to Put must
// not change until the transaction commits (bbolt keeps it until then).
// Writing through the Bucket of a ReadTx fails (bbolt's ErrTxNotWritable).
// Inside the group commit every write is also recorded for the log-ahead.
type Bucket struct {
	b    *bolt.Bucket
	rec  *recorder // nil outside the group commit
	path []byte    // the bucket's path as the recorder writes it
}

// Get returns the value of key, or nil.
func (b *Bucket) Get(key []byte) []byte { return b.b.Get(key) }

// Put sets key to value.
func (b *Bucket) Put(key, value []byte) error {
	err := b.b.Put(key, value)
	if err == nil {
		b.rec.put(b.path, key, value)
	}
	return err
}

// Delete removes key; removing an absent key is not an error.
func (b *Bucket) Delete(key []byte) error {
	err := b.b.Delete(key)
	if err == nil {
		b.rec.del(b.path, key)
	}
	return err
}

// ForEach calls fn for every key in order (a nested bucket's value is
// nil); an error from fn stops it and is returned.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

// NextSequence increments and returns the bucket's sequence.
func (b *Bucket) NextSequence() (uint64, error) {
	seq, err := b.b.NextSequence()
	if err == nil {
		b.rec.setSequence(b.path, seq)
	}
	return seq, err
}

// KeyN counts the keys of the bucket and of the buckets nested in it (a
// nested bucket's own key included); it walks their trees.
func (b *Bucket) KeyN() int { return b.b.Stats().KeyN }

// Cursor returns a cursor over the bucket's keys.
func (b *Bucket) Cursor() *Cursor { return &Cursor{c: b.b.Cursor(), b: b} }

// Bucket returns the nested bucket name, or nil.
func (b *Bucket) Bucket(name []byte) *Bucket {
	return wrapBucket(b.b.Bucket(name), b.rec, b.path, name)
}

// CreateBucketIfNotExists creates the nested bucket name unless it exists.
func (b *Bucket) CreateBucketIfNotExists(name []byte) (*Bucket, error) {
	nb, err := b.b.CreateBucketIfNotExists(name)
	if err == nil {
		b.rec.bucketOp(walCreateBucketIfNotExists, b.path, name)
	}
	return wrapBucket(nb, b.rec, b.path, name), err
}

// DeleteBucket deletes the nested bucket name.
func (b *Bucket) DeleteBucket(name []byte) error {
	err := b.b.DeleteBucket(name)
	if err == nil {
		b.rec.bucketOp(walDeleteBucket, b.path, name)
	}
	return err
}

// Cursor walks a Bucket's keys in order (bbolt's Cursor). A nil key means
// there is none.
type Cursor struct {
	c   *bolt.Cursor
	b   *Bucket
	key []byte // where the cursor is, for Delete's record
}

func (c *Cursor) at(k, v []byte) ([]byte, []byte) {
	c.key = k
	return k, v
}

// First moves to the first key.
func (c *Cursor) First() (k, v []byte) { return c.at(c.c.First()) }

// Last moves to the last key.
func (c *Cursor) Last() (k, v []byte) { return c.at(c.c.Last()) }

// Next moves to the next key.
func (c *Cursor) Next() (k, v []byte) { return c.at(c.c.Next()) }

// Prev moves to the previous key.
func (c *Cursor) Prev() (k, v []byte) { return c.at(c.c.Prev()) }

// Seek moves to key, or to the next key after it.
func (c *Cursor) Seek(key []byte) (k, v []byte) { return c.at(c.c.Seek(key)) }

// Delete removes the key the cursor is at.
func (c *Cursor) Delete() error {
	err := c.c.Delete()
	if err == nil {
		c.b.rec.del(c.b.path, c.key)
	}
	return err
}
