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
func (tx ReadTx) Bucket(n BucketName) *Bucket { return (*Bucket)(tx.tx.Bucket(n.name)) }

// CreateBucket creates the registered bucket n; it fails when n exists.
func (tx Tx) CreateBucket(n BucketName) (*Bucket, error) {
	b, err := tx.tx.CreateBucket(n.name)
	return (*Bucket)(b), err
}

// CreateBucketIfNotExists creates the registered bucket n unless it exists.
func (tx Tx) CreateBucketIfNotExists(n BucketName) (*Bucket, error) {
	b, err := tx.tx.CreateBucketIfNotExists(n.name)
	return (*Bucket)(b), err
}

// DeleteBucket deletes the registered bucket n and everything in it.
func (tx Tx) DeleteBucket(n BucketName) error { return tx.tx.DeleteBucket(n.name) }

// Bucket is a registered bucket, or a bucket nested in one: bbolt's
// Bucket with the methods owner packages use. Keys and values read from
// it are valid only inside the transaction; a value passed to Put must
// not change until the transaction commits (bbolt keeps it until then).
// Writing through the Bucket of a ReadTx fails (bbolt's ErrTxNotWritable).
type Bucket bolt.Bucket

func (b *Bucket) bolt() *bolt.Bucket { return (*bolt.Bucket)(b) }

// Get returns the value of key, or nil.
func (b *Bucket) Get(key []byte) []byte { return b.bolt().Get(key) }

// Put sets key to value.
func (b *Bucket) Put(key, value []byte) error { return b.bolt().Put(key, value) }

// Delete removes key; removing an absent key is not an error.
func (b *Bucket) Delete(key []byte) error { return b.bolt().Delete(key) }

// ForEach calls fn for every key in order (a nested bucket's value is
// nil); an error from fn stops it and is returned.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error { return b.bolt().ForEach(fn) }

// NextSequence increments and returns the bucket's sequence.
func (b *Bucket) NextSequence() (uint64, error) { return b.bolt().NextSequence() }

// KeyN counts the keys of the bucket and of the buckets nested in it (a
// nested bucket's own key included); it walks their trees.
func (b *Bucket) KeyN() int { return b.bolt().Stats().KeyN }

// Cursor returns a cursor over the bucket's keys.
func (b *Bucket) Cursor() *Cursor { return (*Cursor)(b.bolt().Cursor()) }

// Bucket returns the nested bucket name, or nil.
func (b *Bucket) Bucket(name []byte) *Bucket { return (*Bucket)(b.bolt().Bucket(name)) }

// CreateBucketIfNotExists creates the nested bucket name unless it exists.
func (b *Bucket) CreateBucketIfNotExists(name []byte) (*Bucket, error) {
	nb, err := b.bolt().CreateBucketIfNotExists(name)
	return (*Bucket)(nb), err
}

// DeleteBucket deletes the nested bucket name.
func (b *Bucket) DeleteBucket(name []byte) error { return b.bolt().DeleteBucket(name) }

// Cursor walks a Bucket's keys in order (bbolt's Cursor). A nil key means
// there is none.
type Cursor bolt.Cursor

func (c *Cursor) bolt() *bolt.Cursor { return (*bolt.Cursor)(c) }

// First moves to the first key.
func (c *Cursor) First() (k, v []byte) { return c.bolt().First() }

// Last moves to the last key.
func (c *Cursor) Last() (k, v []byte) { return c.bolt().Last() }

// Next moves to the next key.
func (c *Cursor) Next() (k, v []byte) { return c.bolt().Next() }

// Prev moves to the previous key.
func (c *Cursor) Prev() (k, v []byte) { return c.bolt().Prev() }

// Seek moves to key, or to the next key after it.
func (c *Cursor) Seek(key []byte) (k, v []byte) { return c.bolt().Seek(key) }

// Delete removes the key the cursor is at.
func (c *Cursor) Delete() error { return c.bolt().Delete() }
