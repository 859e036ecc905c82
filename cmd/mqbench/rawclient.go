package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
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
}

// rawRequest builds the bytes of a POST of body to target.
func rawRequest(target string, body []byte) ([]byte, string, error) {
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
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mqbench\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		u.RequestURI(), u.Host, len(body))
	return append([]byte(b.String()), body...), host, nil
}

// do sends one pre-built request and drains the answer. A connection the
// server closed between requests (keep-alive timeout) is redialled once
// before the request counts as failed; the request had not been read then.
func (c *rawConn) do(ctx context.Context, req []byte) (int, error) {
	for attempt := 0; ; attempt++ {
		fresh := c.conn == nil
		if fresh {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", c.addr)
			if err != nil {
				return 0, err
			}
			c.conn, c.br = conn, bufio.NewReaderSize(conn, 16<<10)
		}
		if c.timeout > 0 {
			_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
		}
		status, err := c.roundTrip(req)
		if err == nil {
			return status, nil
		}
		c.close()
		if fresh || attempt > 0 || status != 0 || ctx.Err() != nil || !staleConn(err) {
			return status, err
		}
	}
}

func (c *rawConn) roundTrip(req []byte) (int, error) {
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
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		resp.Body.Close()
		return resp.StatusCode, err
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
