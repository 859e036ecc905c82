package cli

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	e := &env{ctx: context.Background(), name: "pub", stderr: &bytes.Buffer{}, cmd: &commands[2]}
	fs := e.flags("pub")
	tags := fs.String("tags", "", "")
	pos, err := e.parse(fs, []string{"orders", "--tags", "x", "hello", "-o", "json", "--", "--not-a-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"orders", "hello", "--not-a-flag"}; !slices.Equal(pos, want) || *tags != "x" || e.output != "json" {
		t.Fatalf("pos %q tags %q output %q", pos, *tags, e.output)
	}
}

type fakeResp struct {
	status int
	body   string
}

func (f fakeResp) StatusCode() int { return f.status }
func (f fakeResp) GetBody() []byte { return []byte(f.body) }

func TestExitCodes(t *testing.T) {
	for status, code := range map[int]int{
		400: ExitUsage, 413: ExitUsage, 401: ExitForbidden, 403: ExitForbidden, 404: ExitNotFound,
		409: ExitConflict, 422: ExitConflict, 429: ExitServer, 500: ExitServer, 503: ExitServer,
	} {
		err := check(fakeResp{status, `{"title":"T","detail":"D","errors":[{"field":"f","message":"m"}]}`}, nil)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != code || !strings.Contains(ee.msg, "T: D") || !strings.Contains(ee.msg, "f: m") {
			t.Errorf("status %d: %v (code %d), want code %d", status, err, ee.code, code)
		}
	}
	if err := check(fakeResp{204, ""}, nil); err != nil {
		t.Fatal(err)
	}
	var ee *exitError
	if err := check(nil, errors.New("dial tcp: refused")); !errors.As(err, &ee) || ee.code != ExitServer {
		t.Fatalf("transport error: %v", err)
	}
}

func TestRunUnknownAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), "nope", nil, nil, &out, &errb); code != ExitUsage {
		t.Fatalf("unknown command: %d", code)
	}
	if code := Run(context.Background(), "topic", []string{"-h"}, nil, &out, &errb); code != ExitOK || !strings.Contains(errb.String(), "Usage: mqgate topic") {
		t.Fatalf("topic -h: %d %q", code, errb.String())
	}
	if code := Run(context.Background(), "topic", nil, nil, &out, &errb); code != ExitUsage {
		t.Fatalf("topic without a verb: %d", code)
	}
}

func TestHoistGlobalFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		name string
		rest []string
		bad  string
	}{
		{[]string{"--url", "U", "topic", "list"}, "topic", []string{"--url", "U", "list"}, ""},
		{[]string{"--url=U", "-o", "json", "--key", "K", "pub", "t", "--", "-x"}, "pub", []string{"--url=U", "-o", "json", "--key", "K", "t", "--", "-x"}, ""},
		{[]string{"topic", "list", "--url", "U"}, "topic", []string{"list", "--url", "U"}, ""},
		{[]string{"--version"}, "--version", []string{}, ""},
		{[]string{"--url"}, "", nil, "--url"},
		{[]string{"--url", "U"}, "", []string{"--url", "U"}, ""},
		{nil, "", nil, ""},
	} {
		name, rest, bad := HoistGlobalFlags(tc.args)
		if name != tc.name || bad != tc.bad || strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
			t.Errorf("HoistGlobalFlags(%q) = %q %q %q, want %q %q %q", tc.args, name, rest, bad, tc.name, tc.rest, tc.bad)
		}
	}
}
