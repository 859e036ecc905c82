package groups

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Parked ordering keys of ORDERLY groups (the gateway's blocked-keys park
// and resume) are kept here, in the bucket "groups.parks", so they share
// the store's transactions, crash consistency and backups: one nested
// bucket per group, in it one nested bucket per park named
// topic 0x00 queueID(4 bytes big-endian) shardingKey, holding
//
//	"since"    -> unix nanoseconds (8 bytes big-endian), when it was parked
//	seq(8)     -> a parked message's id, in the order recorded
//
// Deleting a group drops its parks in the same transaction (its dead
// letters, which they name, go with it).
var bucketParks = store.Register("core/groups", "groups.parks")

var parkSinceKey = []byte("since")

// Park is one parked key of a group.
type Park struct {
	Queue       core.MessageQueue
	ShardingKey string
	Since       time.Time
	IDs         []string // the parked messages' ids, as recorded
}

func parkName(mq core.MessageQueue, key string) []byte {
	b := make([]byte, 0, len(mq.Topic)+5+len(key))
	b = append(b, mq.Topic...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(mq.QueueID))
	return append(b, key...)
}

func decodeParkName(n []byte) (core.MessageQueue, string, bool) {
	for i, c := range n {
		if c == 0 {
			if len(n) < i+5 {
				return core.MessageQueue{}, "", false
			}
			mq := core.MessageQueue{Topic: string(n[:i]), QueueID: int(binary.BigEndian.Uint32(n[i+1 : i+5]))}
			return mq, string(n[i+5:]), true
		}
	}
	return core.MessageQueue{}, "", false
}

// Parks returns every group's parked keys.
func (r *Registry) Parks() (map[string][]Park, error) {
	out := map[string][]Park{}
	err := r.st.View(func(tx store.ReadTx) error {
		pb := tx.Bucket(bucketParks)
		if pb == nil {
			return nil
		}
		return pb.ForEach(func(group, v []byte) error {
			gb := pb.Bucket(group)
			if v != nil || gb == nil {
				return nil
			}
			return gb.ForEach(func(name, v []byte) error {
				b := gb.Bucket(name)
				mq, key, ok := decodeParkName(name)
				if v != nil || b == nil || !ok {
					return nil
				}
				p := Park{Queue: mq, ShardingKey: key}
				if s := b.Get(parkSinceKey); len(s) == 8 {
					p.Since = time.Unix(0, int64(binary.BigEndian.Uint64(s))).UTC()
				}
				if err := b.ForEach(func(k, v []byte) error {
					if len(k) == 8 && v != nil {
						p.IDs = append(p.IDs, string(v))
					}
					return nil
				}); err != nil {
					return err
				}
				out[string(group)] = append(out[string(group)], p)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("groups: read parked keys: %w", err)
	}
	return out, nil
}

// parkTx returns the bucket of (group, mq, key), created with since when
// create is set and it is absent; nil when absent (and not created).
func parkTx(tx store.Tx, group string, mq core.MessageQueue, key string, since time.Time, create bool) (*store.Bucket, error) {
	pb := tx.Bucket(bucketParks)
	gb := pb.Bucket([]byte(group))
	name := parkName(mq, key)
	if gb != nil {
		if b := gb.Bucket(name); b != nil || !create {
			return b, nil
		}
	} else if !create {
		return nil, nil
	}
	gb, err := pb.CreateBucketIfNotExists([]byte(group))
	if err != nil {
		return nil, err
	}
	b, err := gb.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return b, b.Put(parkSinceKey, binary.BigEndian.AppendUint64(nil, uint64(since.UnixNano())))
}

// groupExistsTx reports whether group is stored.
func groupExistsTx(tx store.Tx, group string) bool {
	return tx.Bucket(bucketConfig).Get([]byte(group)) != nil
}

// PutPark parks (mq, key) of group since since, unless it is parked
// already (then it keeps its own since and ids); durable when it returns.
// ENotFound when the group does not exist.
func (r *Registry) PutPark(ctx context.Context, group string, mq core.MessageQueue, key string, since time.Time) error {
	return r.commit(ctx, func(tx store.Tx) error {
		if !groupExistsTx(tx, group) {
			return core.Errorf(core.ENotFound, "group %q not found", group)
		}
		_, err := parkTx(tx, group, mq, key, since, true)
		return err
	})
}

// AddParkedIDs records ids as parked under (mq, key) of group, in order;
// nothing when the key is not parked (it was resumed, or the group
// deleted, meanwhile). Durable when it returns.
func (r *Registry) AddParkedIDs(ctx context.Context, group string, mq core.MessageQueue, key string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return r.commit(ctx, func(tx store.Tx) error {
		b, err := parkTx(tx, group, mq, key, time.Time{}, false)
		if err != nil || b == nil {
			return err
		}
		return putParkedIDsTx(b, ids)
	})
}

func putParkedIDsTx(b *store.Bucket, ids []string) error {
	for _, id := range ids {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), []byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// DeletePark ends the park of (mq, key) of group; durable when it returns.
func (r *Registry) DeletePark(ctx context.Context, group string, mq core.MessageQueue, key string) error {
	return r.commit(ctx, func(tx store.Tx) error {
		gb := tx.Bucket(bucketParks).Bucket([]byte(group))
		if gb == nil || gb.Bucket(parkName(mq, key)) == nil {
			return nil
		}
		return gb.DeleteBucket(parkName(mq, key))
	})
}

// deleteParksTx drops group's parks (Delete).
func deleteParksTx(tx store.Tx, group string) error {
	pb := tx.Bucket(bucketParks)
	if pb.Bucket([]byte(group)) == nil {
		return nil
	}
	return pb.DeleteBucket([]byte(group))
}

// parkFileEntry is one park in the JSON file the gateway kept parks in
// before they moved into the store: {"group": [entry, ...]}.
type parkFileEntry struct {
	Topic       string    `json:"topic"`
	QueueID     int       `json:"queueId"`
	ShardingKey string    `json:"shardingKey"`
	Since       time.Time `json:"since"`
	IDs         []string  `json:"messageIds"`
}

// MigrateParkFile moves the parks of the JSON file at path (the gateway's
// former <data>/parked-keys.json) into the store, then removes the file
// and syncs its directory. It is idempotent: a park already in the store
// is kept as it is, so a start interrupted after the write and before the
// removal migrates nothing twice and only removes the file. Parks of
// groups that no longer exist are dropped (their dead letters went with
// the group). It reports how many parks it wrote; no file is not an error.
// An unreadable file is an error, and is left in place.
func (r *Registry) MigrateParkFile(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("groups: migrate %s: %w", path, err)
	}
	var f map[string][]parkFileEntry
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("groups: migrate %s: not a parked-keys file: %w", path, err)
	}
	n := 0
	err = r.st.Update(func(tx store.Tx) error {
		n = 0
		for group, es := range f {
			if !groupExistsTx(tx, group) {
				continue
			}
			for _, e := range es {
				mq := core.MessageQueue{Topic: e.Topic, QueueID: e.QueueID}
				if gb := tx.Bucket(bucketParks).Bucket([]byte(group)); gb != nil && gb.Bucket(parkName(mq, e.ShardingKey)) != nil {
					continue // migrated before an interrupted start
				}
				b, err := parkTx(tx, group, mq, e.ShardingKey, e.Since, true)
				if err != nil {
					return err
				}
				if err := putParkedIDsTx(b, e.IDs); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("groups: migrate %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return n, fmt.Errorf("groups: migrate %s: remove: %w", path, err)
	}
	// A temporary file the former writer left behind a crash.
	if err := os.Remove(path + ".tmp"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("groups: migrate %s: remove: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return n, fmt.Errorf("groups: migrate %s: %w", path, err)
	}
	if n > 0 {
		r.log.Info().Int("parks", n).Str("file", path).Msg("parked keys moved into the store")
	}
	return n, nil
}

// syncDir makes a removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
