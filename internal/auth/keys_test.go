package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	pubKey   = "pub-secret-0123456789"
	adminKey = "admin-secret-0123456789"
)

func sum(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

func TestParseErrorsNameTheEntry(t *testing.T) {
	good := `{"name":"ok","key":"` + pubKey + `","grants":["pub:orders"]}`
	for _, tc := range []struct {
		name, file string
		want       []string // substrings of the error
	}{
		{"bad json", `{"keys": [`, []string{"key file"}},
		{"trailing data", `{"keys":[` + good + `]} {}`, []string{"after the JSON object"}},
		{"unknown field", `{"keys":[{"name":"a","key":"` + pubKey + `","grant":["admin"]}]}`, []string{`unknown field "grant"`}},
		{"no keys", `{"keys":[]}`, []string{"no keys"}},
		{"missing keys", `{}`, []string{"no keys"}},
		{"unknown grant", `{"keys":[` + good + `,{"name":"billing","key":"other-secret-0123456","grants":["pub:a","pbu:orders"]}]}`,
			[]string{`keys[1] "billing"`, `grants[1] "pbu:orders"`, "unknown grant"}},
		{"both key and sha256", `{"keys":[{"name":"both","key":"` + pubKey + `","sha256":"` + sum(pubKey) + `","grants":["admin"]}]}`,
			[]string{`keys[0] "both"`, `both "key" and "sha256"`}},
		{"neither", `{"keys":[{"name":"none","grants":["admin"]}]}`, []string{`keys[0] "none"`, `needs "key" or "sha256"`}},
		{"short key", `{"keys":[{"name":"short","key":"abc","grants":["admin"]}]}`, []string{`keys[0] "short"`, "shorter than 16"}},
		{"bad hex", `{"keys":[{"name":"hex","sha256":"zz","grants":["admin"]}]}`, []string{`keys[0] "hex"`, "64 hex digits"}},
		{"short hex", `{"keys":[{"name":"hex","sha256":"abcd","grants":["admin"]}]}`, []string{"64 hex digits"}},
		{"no grants", `{"keys":[{"name":"g","key":"` + pubKey + `"}]}`, []string{`keys[0] "g"`, "no grants"}},
		{"empty pattern", `{"keys":[{"name":"p","key":"` + pubKey + `","grants":["sub:"]}]}`, []string{"pattern is empty"}},
		{"bad pattern", `{"keys":[{"name":"p","key":"` + pubKey + `","grants":["sub:ord[ers"]}]}`, []string{`grants[0] "sub:ord[ers"`, "syntax error in pattern"}},
		{"slash in pattern", `{"keys":[{"name":"p","key":"` + pubKey + `","grants":["pub:a/b"]}]}`, []string{`character '/'`}},
		{"bad name", `{"keys":[{"name":"a b","key":"` + pubKey + `","grants":["admin"]}]}`, []string{`keys[0] "a b"`, "name must be"}},
		{"duplicate name", `{"keys":[` + good + `,{"name":"ok","key":"other-secret-0123456","grants":["admin"]}]}`,
			[]string{`keys[1] "ok"`, "already used by keys[0]"}},
		{"duplicate secret", `{"keys":[` + good + `,{"name":"twin","sha256":"` + sum(pubKey) + `","grants":["admin"]}]}`,
			[]string{`keys[1] "twin"`, `same secret as keys[0] "ok"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := Parse([]byte(tc.file))
			if err == nil {
				t.Fatalf("loaded %d keys, want an error", ks.Len())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), pubKey) {
				t.Errorf("error %q leaks the key", err)
			}
		})
	}
}

func TestParseReportsEveryBadEntry(t *testing.T) {
	_, err := Parse([]byte(`{"keys":[{"name":"a","grants":["admin"]},{"name":"b","key":"` + pubKey + `","grants":["nope"]}]}`))
	if err == nil || !strings.Contains(err.Error(), `keys[0] "a"`) || !strings.Contains(err.Error(), `keys[1] "b"`) {
		t.Fatalf("error %v: want both entries named", err)
	}
}

func TestAuthenticate(t *testing.T) {
	ks, err := Parse([]byte(`{"keys":[
		{"name":"writer","key":"` + pubKey + `","grants":["pub:orders","pub:orders-*"]},
		{"name":"ops","sha256":"` + strings.ToUpper(sum(adminKey)) + `","grants":["admin"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 2 {
		t.Fatalf("Len %d", ks.Len())
	}
	for _, tc := range []struct{ token, want string }{
		{pubKey, "writer"},
		{adminKey, "ops"},
		{"", ""},
		{pubKey + "x", ""},
		{pubKey[:len(pubKey)-1], ""},
		{sum(adminKey), ""}, // the digest is not the key
	} {
		k := ks.Authenticate(tc.token)
		got := ""
		if k != nil {
			got = k.Name
		}
		if got != tc.want {
			t.Errorf("Authenticate(%q) = %q, want %q", tc.token, got, tc.want)
		}
	}
}

func TestKeyringReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"keys":[{"name":"one","key":"` + pubKey + `","grants":["pub:*"]}]}`)
	kr, err := OpenKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	if k := kr.Authenticate(pubKey); k == nil || k.Name != "one" {
		t.Fatalf("before reload: %v", k)
	}
	// A broken file keeps the old keys.
	write(`{"keys":[{"name":"two","key":"` + adminKey + `","grants":["root"]}]}`)
	if _, err := kr.Reload(); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("Reload of a bad file: %v, want an error naming the file", err)
	}
	if kr.Authenticate(pubKey) == nil {
		t.Fatal("a failed reload dropped the old keys")
	}
	write(`{"keys":[{"name":"two","key":"` + adminKey + `","grants":["admin"]}]}`)
	if _, err := kr.Reload(); err != nil {
		t.Fatal(err)
	}
	if kr.Authenticate(pubKey) != nil {
		t.Fatal("the removed key still authenticates")
	}
	if k := kr.Authenticate(adminKey); k == nil || k.Name != "two" {
		t.Fatalf("after reload: %v", k)
	}
	if _, err := NewKeyring(kr.Keys()).Reload(); err == nil {
		t.Fatal("Reload of a fileless keyring succeeded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"keys":[{"name":"a","key":"` + pubKey + `","grants":["pub:o*","sub:[a-c]?","admin"]}]}`))
	f.Add([]byte(`{"keys":[{"name":"a","sha256":"` + sum(pubKey) + `","grants":["sub:x"]}]}`))
	f.Add([]byte(`{"keys":[{"name":"a","key":"` + pubKey + `","grants":["pub:[^"]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ks, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever loads must match without panicking and with no
		// malformed pattern left for request time.
		for _, k := range ks.keys {
			for _, g := range k.Grants {
				if g.Kind != Admin {
					if _, err := ParseGrant(g.String()); err != nil {
						t.Fatalf("loaded grant %q does not parse again: %v", g, err)
					}
				}
				k.Allows(Pub, "orders")
				k.Allows(Sub, "billing")
			}
		}
	})
}
