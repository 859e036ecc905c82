package auth

import (
	"errors"
	"sync/atomic"
)

var errNoFile = errors.New("auth: this keyring has no file to reload")

// Keyring is the key set a server checks requests against, replaced as a
// whole by Reload (SIGHUP in cmd/mqgate). Safe for concurrent use.
type Keyring struct {
	file string
	keys atomic.Pointer[Keys]
}

// OpenKeyring loads the key file; Reload reads it again.
func OpenKeyring(file string) (*Keyring, error) {
	ks, err := LoadFile(file)
	if err != nil {
		return nil, err
	}
	kr := &Keyring{file: file}
	kr.keys.Store(ks)
	return kr, nil
}

// NewKeyring holds a fixed key set (tests, embedding); Reload on it
// fails.
func NewKeyring(ks *Keys) *Keyring {
	kr := &Keyring{}
	kr.keys.Store(ks)
	return kr
}

// Reload reads the key file again and, when it loads, swaps it in for
// every request that starts from now on. On error the current keys stay.
func (kr *Keyring) Reload() (*Keys, error) {
	if kr.file == "" {
		return nil, errNoFile
	}
	ks, err := LoadFile(kr.file)
	if err != nil {
		return nil, err
	}
	kr.keys.Store(ks)
	return ks, nil
}

// File is the key file's path ("" for NewKeyring).
func (kr *Keyring) File() string { return kr.file }

// Keys is the current key set.
func (kr *Keyring) Keys() *Keys { return kr.keys.Load() }

// Authenticate is Keys().Authenticate(token).
func (kr *Keyring) Authenticate(token string) *Key { return kr.keys.Load().Authenticate(token) }
