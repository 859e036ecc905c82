package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MinKeyLength is the shortest plain "key" a key file may hold. Keys are
// bearer secrets: anything shorter is guessable. (A "sha256" entry cannot
// be checked; generate keys with e.g. `openssl rand -hex 32`.)
const MinKeyLength = 16

// File is the JSON key file (docs/security.md).
type File struct {
	Keys []FileKey `json:"keys"`
}

// FileKey is one entry of the key file. Exactly one of Key and SHA256 is
// set.
type FileKey struct {
	// Name identifies the key in logs; it is not a secret.
	Name string `json:"name"`
	// Key is the plain key. Prefer SHA256, so the file holds no secret.
	Key string `json:"key,omitempty"`
	// SHA256 is the hex SHA-256 of the key
	// (`printf %s "$KEY" | sha256sum`).
	SHA256 string `json:"sha256,omitempty"`
	// Grants are "admin", "pub:<topic pattern>" or "sub:<group pattern>".
	Grants []string `json:"grants"`
	// Limits are the key's quotas (limits.go, docs/quotas.md); none when
	// absent.
	Limits *Limits `json:"limits,omitempty"`
}

// Key is one loaded API key: its name and grants, and the digest of the
// secret (never the secret).
type Key struct {
	Name   string
	Grants []Grant
	// Limits are the key's quotas; nil: none.
	Limits *Limits
	digest [sha256.Size]byte
}

// Allows reports whether the key may do kind on name (a topic for Pub, a
// group for Sub; name is ignored for Admin, which only admin grants).
func (k *Key) Allows(kind Kind, name string) bool {
	for _, g := range k.Grants {
		if kind == Admin {
			if g.Kind == Admin {
				return true
			}
			continue
		}
		if g.allows(kind, name) {
			return true
		}
	}
	return false
}

// Keys is an immutable set of keys.
type Keys struct {
	keys []*Key
}

// Len is the number of keys.
func (ks *Keys) Len() int { return len(ks.keys) }

// All is the keys in file order; callers must not change them.
func (ks *Keys) All() []*Key { return ks.keys }

// Authenticate returns the key whose secret is token, or nil. It hashes
// token and compares the digest with every key's in constant time, going
// through all keys whatever matches.
func (ks *Keys) Authenticate(token string) *Key {
	d := sha256.Sum256([]byte(token))
	var found *Key
	for _, k := range ks.keys {
		if subtle.ConstantTimeCompare(d[:], k.digest[:]) == 1 {
			found = k
		}
	}
	return found
}

// LoadFile reads and checks a key file.
func LoadFile(name string) (*Keys, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	ks, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ks, nil
}

// Parse reads a key file's JSON. Unknown fields, a bad grant, a missing or
// duplicate name, both or neither of key and sha256, a duplicate secret or
// an empty list are errors naming the entry: a key file that loads means
// what it says.
func Parse(b []byte) (*Keys, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("key file: unexpected data after the JSON object")
	}
	if len(f.Keys) == 0 {
		return nil, errors.New("key file: no keys (\"keys\" is missing or empty); without keys, drop --api-keys")
	}
	ks := &Keys{keys: make([]*Key, 0, len(f.Keys))}
	names := make(map[string]int, len(f.Keys))
	digests := make(map[[sha256.Size]byte]int, len(f.Keys))
	var errs []error
	for i, fk := range f.Keys {
		k, err := parseKey(fk)
		if err != nil {
			errs = append(errs, fmt.Errorf("keys[%d] %q: %w", i, fk.Name, err))
			continue
		}
		if j, dup := names[k.Name]; dup {
			errs = append(errs, fmt.Errorf("keys[%d] %q: name already used by keys[%d]", i, k.Name, j))
			continue
		}
		if j, dup := digests[k.digest]; dup {
			errs = append(errs, fmt.Errorf("keys[%d] %q: same secret as keys[%d] %q", i, k.Name, j, f.Keys[j].Name))
			continue
		}
		names[k.Name], digests[k.digest] = i, i
		ks.keys = append(ks.keys, k)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ks, nil
}

func parseKey(fk FileKey) (*Key, error) {
	if !validKeyName(fk.Name) {
		return nil, errors.New("name must be 1 to 64 of A-Z a-z 0-9 _ - . @")
	}
	k := &Key{Name: fk.Name}
	switch {
	case fk.Key != "" && fk.SHA256 != "":
		return nil, errors.New("has both \"key\" and \"sha256\"; keep one (sha256 keeps the secret out of the file)")
	case fk.Key != "":
		if len(fk.Key) < MinKeyLength {
			return nil, fmt.Errorf("\"key\" is shorter than %d characters", MinKeyLength)
		}
		k.digest = sha256.Sum256([]byte(fk.Key))
	case fk.SHA256 != "":
		raw, err := hex.DecodeString(fk.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, errors.New("\"sha256\" must be 64 hex digits (printf %s \"$KEY\" | sha256sum)")
		}
		copy(k.digest[:], raw)
	default:
		return nil, errors.New("needs \"key\" or \"sha256\"")
	}
	if len(fk.Grants) == 0 {
		return nil, errors.New("no grants")
	}
	for j, s := range fk.Grants {
		g, err := ParseGrant(s)
		if err != nil {
			return nil, fmt.Errorf("grants[%d] %q: %w", j, s, err)
		}
		k.Grants = append(k.Grants, g)
	}
	if fk.Limits != nil {
		if err := fk.Limits.check(); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		k.Limits = fk.Limits
	}
	return k, nil
}

func validKeyName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == '.', c == '@':
		default:
			return false
		}
	}
	return true
}
