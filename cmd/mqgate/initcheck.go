package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/gateway"
)

// refuseLostStore refuses to start an empty store where one was lost: the
// gateway's handle key (gateway.key) is written on the first start next to
// the store, so a data directory holding it but a missing or 0-byte
// mqgate.db had a store that is gone (a botched restore, a volume mounted
// half-way, a truncation to nothing). Starting would silently serve an
// empty store over it. --init (MQGATE_INIT) says the operator means it. A
// brand-new directory (no key) starts without --init.
func refuseLostStore(dir string, init bool) error {
	if init {
		return nil
	}
	key := filepath.Join(dir, gateway.KeyFile)
	if _, err := os.Stat(key); err != nil {
		return nil // no sign of an earlier store (an unreadable key is the gateway's to report)
	}
	db := filepath.Join(dir, store.FileName)
	fi, err := os.Stat(db)
	var state string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		state = "is missing"
	case err != nil:
		return nil // the store's open reports it
	case fi.Size() == 0:
		state = "is empty (0 bytes)"
	default:
		return nil
	}
	return fmt.Errorf("refusing to start: %s %s, but %s shows this data directory held a store before; "+
		"starting would serve an empty store in its place. Restore %s from a backup (docs/operations.md), "+
		"or pass --init (MQGATE_INIT=true) to start an empty store here on purpose",
		db, state, key, store.FileName)
}
