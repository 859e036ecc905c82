package auth

import "testing"

func TestAllows(t *testing.T) {
	mk := func(grants ...string) *Key {
		k := &Key{Name: "k"}
		for _, s := range grants {
			g, err := ParseGrant(s)
			if err != nil {
				t.Fatalf("ParseGrant(%q): %v", s, err)
			}
			k.Grants = append(k.Grants, g)
		}
		return k
	}
	writer := mk("pub:orders", "pub:orders-*")
	reader := mk("sub:billing", "sub:team-?", "sub:[ab]x")
	admin := mk("admin")
	for _, tc := range []struct {
		key  *Key
		kind Kind
		name string
		want bool
	}{
		{writer, Pub, "orders", true},
		{writer, Pub, "orders-eu", true},
		{writer, Pub, "orders-", true},
		{writer, Pub, "ordersx", false},
		{writer, Pub, "order", false},
		{writer, Pub, "%RETRY%orders", false},
		{writer, Sub, "orders", false}, // pub does not grant sub on the same name
		{writer, Admin, "", false},
		{reader, Sub, "billing", true},
		{reader, Sub, "billing2", false},
		{reader, Sub, "team-a", true},
		{reader, Sub, "team-ab", false},
		{reader, Sub, "ax", true},
		{reader, Sub, "cx", false},
		{reader, Pub, "billing", false},
		{admin, Pub, "anything", true},
		{admin, Sub, "anything", true},
		{admin, Admin, "", true},
		{mk("pub:*"), Pub, "x", true},
		{mk("pub:*"), Admin, "", false},
	} {
		if got := tc.key.Allows(tc.kind, tc.name); got != tc.want {
			t.Errorf("%v.Allows(%v, %q) = %v, want %v", tc.key.Grants, tc.kind, tc.name, got, tc.want)
		}
	}
}

func TestParseGrantRejectsBadPatterns(t *testing.T) {
	for _, s := range []string{"", "pub", "pub:", "sub:", "admin:x", "Admin", "pub:a/b", "pub:a.b", "pub:[", "pub:a[", "pub:[a-", "pub:\\*", "read:x", "pub:a b"} {
		if g, err := ParseGrant(s); err == nil {
			t.Errorf("ParseGrant(%q) = %v, want an error", s, g)
		}
	}
	for _, s := range []string{"admin", "pub:*", "sub:a?c", "pub:[a-z]*", "pub:[^x]y", "sub:ORD_ers-1"} {
		if _, err := ParseGrant(s); err != nil {
			t.Errorf("ParseGrant(%q): %v", s, err)
		}
	}
}
