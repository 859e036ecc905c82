package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	json "github.com/segmentio/encoding/json"
)

// rawConn is a lean HTTP/1.1 client for the publish hot loop: one
// keep-alive connection per worker, requests written as pre-built bytes
// (request line, headers and body encoded before the clock starts) and
// answers parsed by net/http's own http.ReadResponse. It skips
// http.Client's per-request work (header maps, the connection pool and
// its goroutines), which on a 2-core machine otherwise takes CPU from the
// server being measured. --client std switches back to net/http's client.
type rawConn struct {
	addr    string
	timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	// live is conn as seen by cutNow, which runs on another goroutine
	// (rawPoster's context.AfterFunc).
	live atomic.Pointer[net.Conn]
}

// cutNow makes the request in flight, if any, fail at once.
func (c *rawConn) cutNow() {
	if p := c.live.Load(); p != nil {
		_ = (*p).SetDeadline(time.Unix(1, 0))
	}
}

// rawTarget parses a URL for the raw client: the URL, and the host:port
// to dial.
func rawTarget(target string) (*url.URL, string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme != "http" {
		return nil, "", fmt.Errorf("--client raw speaks plain http only, not %q", u.Scheme)
	}
	host := u.Host
	if !strings.Contains(host, ":") {
		host += ":80"
	}
	return u, host, nil
}

// rawHead is a JSON POST's request line and headers to u, up to the value
// of Content-Length.
func rawHead(u *url.URL) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mqbench\r\nContent-Type: application/json\r\nContent-Length: ",
		u.RequestURI(), u.Host)
}

// appendRequest appends to dst a request of head (rawHead) and body.
func appendRequest(dst, head, body []byte) []byte {
	dst = strconv.AppendInt(append(dst, head...), int64(len(body)), 10)
	return append(append(dst, "\r\n\r\n"...), body...)
}

// rawRequest builds the bytes of a POST of body to target.
func rawRequest(target string, body []byte) ([]byte, string, error) {
	u, addr, err := rawTarget(target)
	if err != nil {
		return nil, "", err
	}
	return appendRequest(nil, rawHead(u), body), addr, nil
}

// do sends one pre-built request and drains the answer. A connection the
// server closed between requests (keep-alive timeout) is redialled once
// before the request counts as failed; the request had not been read then.
func (c *rawConn) do(ctx context.Context, req []byte) (int, error) {
	return c.doKeep(ctx, req, nil)
}

// doKeep is do that also keeps a 2xx answer's body in *keep (reused).
func (c *rawConn) doKeep(ctx context.Context, req []byte, keep *[]byte) (int, error) {
	for attempt := 0; ; attempt++ {
		fresh := c.conn == nil
		if fresh {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", c.addr)
			if err != nil {
				return 0, err
			}
			c.conn, c.br = conn, bufio.NewReaderSize(conn, 16<<10)
			c.live.Store(&conn)
			if ctx.Err() != nil { // cut before the connection was visible
				c.close()
				return 0, ctx.Err()
			}
		}
		if c.timeout > 0 {
			_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
		}
		status, err := c.roundTrip(req, keep)
		if err == nil {
			return status, nil
		}
		c.close()
		if fresh || attempt > 0 || status != 0 || ctx.Err() != nil || !staleConn(err) {
			return status, err
		}
	}
}

func (c *rawConn) roundTrip(req []byte, keep *[]byte) (int, error) {
	if _, err := c.conn.Write(req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, err
	}
	var detail []byte
	if resp.StatusCode/100 != 2 {
		detail, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	}
	var err2 error
	if keep != nil && detail == nil {
		buf := bytes.NewBuffer((*keep)[:0])
		_, err2 = buf.ReadFrom(resp.Body)
		*keep = buf.Bytes()
	} else {
		_, err2 = io.Copy(io.Discard, resp.Body)
	}
	if err2 != nil {
		resp.Body.Close()
		return resp.StatusCode, err2
	}
	resp.Body.Close()
	if resp.Close {
		c.close()
	}
	if detail != nil {
		return resp.StatusCode, &httpError{method: http.MethodPost, status: resp.StatusCode,
			url: "(raw)", body: strings.TrimSpace(string(detail))}
	}
	return resp.StatusCode, nil
}

func (c *rawConn) close() {
	if c.conn != nil {
		c.live.Store(nil)
		c.conn.Close()
		c.conn, c.br = nil, nil
	}
}

// staleConn reports whether err is what a keep-alive connection the
// server already closed gives: the request was not processed, so sending
// it again on a new connection publishes nothing twice.
func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// rawPoster is a receiver's lean client: one keep-alive rawConn, each
// request's head built once per URL, answers read into one reused buffer.
// Receive and ack bodies differ every time, so unlike the publish loop's
// requests they are encoded per call; what it saves is http.Client's
// per-request work, which the receivers would otherwise take from the
// server on a 2-core machine, as the publish loop's would.
type rawPoster struct {
	conn  rawConn
	heads map[string][]byte // URL -> request line and headers up to Content-Length's value
	req   []byte
	body  []byte
}

func newRawPoster(base string, timeout time.Duration) (*rawPoster, error) {
	_, addr, err := rawTarget(base)
	if err != nil {
		return nil, err
	}
	return &rawPoster{conn: rawConn{addr: addr, timeout: timeout}, heads: map[string][]byte{}}, nil
}

func (p *rawPoster) postJSON(ctx context.Context, target string, in, out any) (int, error) {
	head, ok := p.heads[target]
	if !ok {
		u, _, err := rawTarget(target)
		if err != nil {
			return 0, err
		}
		head = rawHead(u)
		p.heads[target] = head
	}
	body, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	p.req = appendRequest(p.req[:0], head, body)
	// A long poll blocks in a read that ctx cannot reach: its end moves the
	// connection's deadline into the past instead.
	var cut func() bool
	if ctx.Done() != nil {
		cut = context.AfterFunc(ctx, p.conn.cutNow)
	}
	status, err := p.conn.doKeep(ctx, p.req, &p.body)
	if cut != nil {
		cut()
	}
	if err != nil || out == nil {
		return status, err
	}
	if err := json.Unmarshal(p.body, out); err != nil {
		return status, fmt.Errorf("POST %s: decode answer: %w", target, err)
	}
	return status, nil
}

func (p *rawPoster) close() { p.conn.close() }
