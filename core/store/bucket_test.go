package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// mustPanic runs fn and returns what it panicked with.
func mustPanic(t *testing.T, fn func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("no panic")
		}
		msg, _ = r.(string)
	}()
	fn()
	return ""
}

// TestRegisterOneOwner: a bucket name has one owner; a second one, or a
// name of the store's own, is refused when the package initialises.
var _ = Register("core/store test", "test.owned")

func TestRegisterOneOwner(t *testing.T) {
	if msg := mustPanic(t, func() { Register("elsewhere", "test.owned") }); !strings.Contains(msg, "core/store test") ||
		!strings.Contains(msg, "elsewhere") {
		t.Fatalf("second owner: %q, want both owners named", msg)
	}
	mustPanic(t, func() { Register("elsewhere", "mq.meta") })
	mustPanic(t, func() { Register("elsewhere", "") })
	found := false
	for _, r := range Registered() {
		found = found || r == "test.owned (core/store test)"
	}
	if !found {
		t.Fatalf("Registered() = %v", Registered())
	}
}

// TestBucketThroughTx: a registered bucket is reached only through its
// name, created by its owner, written in a Tx and read in a ReadTx; a
// Hook gets the same write view inside the group commit.
var testBucket = Register("core/store test", "test.bucket")

func TestBucketThroughTx(t *testing.T) {
	name := testBucket
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(func(tx ReadTx) error {
		if tx.Bucket(name) != nil || tx.Bucket(BucketName{}) != nil {
			t.Error("a bucket nobody created exists")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx Tx) error {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		sub, err := b.CreateBucketIfNotExists([]byte("sub"))
		if err != nil {
			return err
		}
		return sub.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(t.Context(), nil, func(tx Tx) error {
		return tx.Bucket(name).Put([]byte("hook"), []byte("ran"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(tx ReadTx) error {
		b := tx.Bucket(name)
		if v := b.Bucket([]byte("sub")).Get([]byte("k")); string(v) != "v" {
			t.Errorf("nested value %q", v)
		}
		if v := b.Get([]byte("hook")); string(v) != "ran" {
			t.Errorf("hook's value %q", v)
		}
		if k, _ := b.Cursor().First(); string(k) != "hook" || b.KeyN() != 3 {
			t.Errorf("first key %q, %d keys", k, b.KeyN())
		}
		if err := b.Put([]byte("x"), nil); err == nil {
			t.Error("a write through a ReadTx succeeded")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.View(func(ReadTx) error { return nil }); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("View after Close: %v, want core.ErrClosed", err)
	}
}
