package gateway

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mqgate/mqgate/core/policy"
)

// KeyFile is the receipt-handle signing key's file name in the data dir.
const KeyFile = "gateway.key"

const keySize = policy.KeySize

// LoadOrCreateKey returns the handle signing key kept in dir, generating a
// random one (file mode 0600, written to a temporary file, synced and
// renamed into place) on first start. Keeping it means handles of a
// previous run still verify after a restart: they answer `expired`, not
// `invalid`, since their messages are delivered again.
func LoadOrCreateKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, KeyFile)
	key, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(key) < keySize {
			return nil, fmt.Errorf("gateway: key file %s is too short (%d bytes, want %d)", path, len(key), keySize)
		}
		return key, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("gateway: read key: %w", err)
	}
	key = make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("gateway: generate key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, KeyFile+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	// Link rather than rename: if two processes race on first start, the
	// loser reads the winner's key instead of replacing it.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadOrCreateKey(dir)
		}
		return nil, fmt.Errorf("gateway: write key: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return key, nil
}
