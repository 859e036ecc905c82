package gateway

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
)

// LoadKeyFile reads a receipt-handle key shared by several gateway
// instances (--handle-key-file): at least 32 bytes, raw or as hex (64+ hex
// digits, surrounding whitespace ignored). Unlike LoadOrCreateKey it never
// creates one: instances that each invented their own key would reject
// each other's handles as `invalid`.
func LoadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: handle key file: %w", err)
	}
	if t := bytes.TrimSpace(b); len(t) >= 2*keySize && len(t)%2 == 0 {
		if k, err := hex.DecodeString(string(t)); err == nil {
			return k, nil
		}
	}
	if len(b) < keySize {
		return nil, fmt.Errorf("gateway: handle key file %s is too short (%d bytes, want %d raw or %d hex digits)", path, len(b), keySize, 2*keySize)
	}
	return b, nil
}
