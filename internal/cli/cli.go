package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mqgate/mqgate/apiclient"
)

// Exit codes (docs/cli.md).
const (
	ExitOK        = 0
	ExitUsage     = 1 // bad arguments, or a request the server refused as invalid
	ExitNotFound  = 2 // 404
	ExitConflict  = 3 // 409, 422
	ExitServer    = 4 // 5xx, 429, connection or timeout
	ExitForbidden = 5 // 401, 403
)

// DefaultURL is the server the CLI talks to without --url / MQGATE_URL.
const DefaultURL = "http://127.0.0.1:8080"

// command is one top-level CLI command.
type command struct {
	name, args, summary string
	run                 func(e *env, args []string) error
}

// commands lists the CLI's commands in help order.
var commands []command

func init() {
	commands = []command{
		{"topic", "list|get|create|delete [TOPIC]", "manage topics", runTopic},
		{"group", "list|get|create|delete [GROUP]", "manage consumer groups", runGroup},
		{"pub", "TOPIC [BODY]", "publish BODY, or each line of stdin", runPub},
		{"sub", "GROUP", "receive messages to stdout, acking each once written", runSub},
		{"ack", "GROUP HANDLE...", "acknowledge received messages", runAck},
		{"nack", "GROUP HANDLE...", "send received messages back for a retry", runNack},
		{"dlq", "GROUP", "list a group's dead letters", runDLQ},
		{"redrive", "GROUP [MESSAGE_ID...]", "send dead letters back to the group (all without ids)", runRedrive},
		{"offsets", "GROUP", "show a group's offsets and lag per queue", runOffsets},
		{"reset", "GROUP --topic T --to POSITION", "move a group's offsets on a topic", runReset},
	}
}

// IsCommand reports whether name is a CLI command.
func IsCommand(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

// Help lists the CLI's commands, for `mqgate help`.
func Help() string {
	var b strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&b, "  mqgate %-8s %-32s %s\n", c.name, c.args, c.summary)
	}
	return b.String()
}

// Run runs the CLI command name with args and returns its exit code. ctx
// ends the command (SIGINT): `sub` stops cleanly, others abandon their
// request.
func Run(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cmd *command
	for i := range commands {
		if commands[i].name == name {
			cmd = &commands[i]
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "mqgate: unknown command %q\n", name)
		return ExitUsage
	}
	e := &env{ctx: ctx, name: name, stdin: stdin, stdout: stdout, stderr: stderr, cmd: cmd}
	err := cmd.run(e, args)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintln(stderr, "mqgate "+name+": "+ee.msg)
		return ee.code
	}
	fmt.Fprintln(stderr, "mqgate "+name+":", err)
	return ExitServer
}

// exitError is a failure with its exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// env is one command's invocation: streams, global flags and the client.
type env struct {
	ctx            context.Context
	name           string
	cmd            *command
	stdin          io.Reader
	stdout, stderr io.Writer

	url, key, output string
	timeout          time.Duration
	client           *apiclient.ClientWithResponses
}

// flags returns a flag set with the global flags (--url, --key, -o,
// --timeout) declared.
func (e *env) flags(usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("mqgate "+e.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	url := os.Getenv("MQGATE_URL")
	if url == "" {
		url = DefaultURL
	}
	fs.StringVar(&e.url, "url", url, "server URL (env MQGATE_URL)")
	fs.StringVar(&e.key, "key", os.Getenv("MQGATE_KEY"), "API key, sent as Authorization: Bearer (env MQGATE_KEY)")
	fs.StringVar(&e.output, "o", "table", "output: table or json")
	fs.StringVar(&e.output, "output", "table", "output: table or json (same as -o)")
	fs.DurationVar(&e.timeout, "timeout", 30*time.Second, "bound on each request (sub: beyond its long poll)")
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: mqgate %s\n\n%s\n\nFlags:\n", usage, e.cmd.summary)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args with flags and positionals interleaved (`mqgate pub
// orders hello --tags x`); "--" ends the flags. It then checks the
// output format and builds the client.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if e.output != "table" && e.output != "json" {
		return nil, usageError("-o %q: want table or json", e.output)
	}
	c, err := apiclient.NewClientWithResponses(strings.TrimRight(e.url, "/"),
		apiclient.WithHTTPClient(&http.Client{}),
		apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if e.key != "" {
				r.Header.Set("Authorization", "Bearer "+e.key)
			}
			r.Header.Set("User-Agent", "mqgate-cli")
			return nil
		}))
	if err != nil {
		return nil, usageError("--url %q: %v", e.url, err)
	}
	e.client = c
	return pos, nil
}

// want checks the number of positional arguments.
func want(pos []string, lo, hi int, usage string) error {
	if len(pos) < lo || (hi >= 0 && len(pos) > hi) {
		return usageError("usage: %s", usage)
	}
	return nil
}

// reqCtx bounds one request by --timeout (plus extra, for long polls).
func (e *env) reqCtx(extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.ctx, e.timeout+extra)
}

// response is what every generated XxxResponse offers.
type response interface {
	StatusCode() int
	GetBody() []byte
}

// check turns a transport error or a non-2xx answer into an exitError
// carrying the problem's detail and field errors. r is only used when err
// is nil.
func check(r response, err error) error {
	if err != nil {
		return &exitError{code: ExitServer, msg: err.Error()}
	}
	st, body := r.StatusCode(), r.GetBody()
	if st >= 200 && st < 300 {
		return nil
	}
	code := ExitServer
	switch {
	case st == http.StatusNotFound:
		code = ExitNotFound
	case st == http.StatusConflict || st == http.StatusUnprocessableEntity:
		code = ExitConflict
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		code = ExitForbidden
	case st == http.StatusTooManyRequests || st >= 500:
		code = ExitServer
	case st >= 400:
		code = ExitUsage
	}
	msg := fmt.Sprintf("HTTP %d", st)
	var p apiclient.Problem
	if json.Unmarshal(body, &p) == nil && p.Title != "" {
		msg += " " + p.Title
		if p.Detail != nil {
			msg += ": " + *p.Detail
		}
		if p.Errors != nil {
			for _, fe := range *p.Errors {
				msg += fmt.Sprintf("\n  %s: %s", str(fe.Field), str(fe.Message))
			}
		}
	} else if len(body) > 0 {
		msg += ": " + strings.TrimSpace(string(body))
	}
	return &exitError{code: code, msg: msg}
}

// printJSON writes an API answer indented, as it came.
func (e *env) printJSON(body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		_, err = e.stdout.Write(body)
		return err
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	_, err := fmt.Fprintf(e.stdout, "%s\n", out)
	return err
}

// table writes rows under a header, aligned.
func (e *env) table(header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// show prints an answer: its JSON with -o json, else table().
func (e *env) show(body []byte, table func() error) error {
	if e.output == "json" {
		return e.printJSON(body)
	}
	return table()
}

// str, num and when render a field whether the generated client makes it
// optional (a pointer, nil shown empty) or required (a value).
func str(v any) string { return show(v) }

func num(v any) string { return show(v) }

func when(v any) string {
	switch t := v.(type) {
	case *time.Time:
		if t == nil {
			return ""
		}
		return when(*t)
	case time.Time:
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	return show(v)
}

func show(v any) string {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return ""
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	return fmt.Sprint(rv.Interface())
}

func ptr[T any](v T) *T { return &v }

// plural is "1 queue", "4 queues".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
