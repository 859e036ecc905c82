package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	// The client's JSON (receive answers are most of its work): a faster
	// drop-in for encoding/json, so the load generator is not what is
	// measured.
	json "github.com/segmentio/encoding/json"
)

// newClient returns an HTTP client tuned so that the load generator is not
// what is measured: keep-alive with more idle connections per host than
// workers (the default of 2 would make most requests dial a new
// connection), no compression, no proxy.
func newClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          2 * conns,
		MaxIdleConnsPerHost:   2 * conns,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// h2cClient speaks cleartext HTTP/2 with prior knowledge (net/http's
// own, no golang.org/x/net): http:// URLs go over one HTTP/2 connection,
// requests multiplexed on it, as on a gateway started with --h2c.
func h2cClient(timeout time.Duration) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		DialContext:        (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		Protocols:          &p,
		DisableCompression: true,
		IdleConnTimeout:    90 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// closeClient drops the client's idle keep-alive connections so that their
// read goroutines end with the run.
func closeClient(c *http.Client) { c.CloseIdleConnections() }

// post sends a pre-encoded JSON body and drains the answer so the
// connection goes back to the pool. It returns the status (0 on a
// transport error); a non-2xx answer is also an *httpError.
func post(ctx context.Context, c *http.Client, url string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		err := answerError(resp, http.MethodPost, url, 1<<10)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// doJSON sends in (nil for no body) and decodes a 2xx answer into out (nil
// to discard it). A non-2xx answer is an *httpError carrying the
// problem+json detail.
func doJSON(ctx context.Context, c *http.Client, method, url string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, answerError(resp, method, url, 4<<10)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode answer: %w", method, url, err)
	}
	return resp.StatusCode, nil
}

type httpError struct {
	method, url string
	status      int
	body        string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.url, e.status, e.body)
}

// answerError is the *httpError of a non-2xx answer, keeping up to limit
// bytes of its problem+json detail for the report's first error.
func answerError(resp *http.Response, method, url string, limit int64) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	return &httpError{method: method, url: url, status: resp.StatusCode, body: strings.TrimSpace(string(b))}
}

// topicURL and groupURL build API.md paths under base.
func topicURL(base, topic string, rest ...string) string {
	return strings.TrimRight(base, "/") + "/v1/topics/" + topic + strings.Join(rest, "")
}

func groupURL(base, group string, rest ...string) string {
	return strings.TrimRight(base, "/") + "/v1/groups/" + group + strings.Join(rest, "")
}

// ensureTopic creates or updates topic with queues queues (PUT is
// idempotent: 201 created, 200 updated).
func ensureTopic(ctx context.Context, c *http.Client, base, topic string, queues int) error {
	in := map[string]any{}
	if queues > 0 {
		in["queues"] = queues
	}
	_, err := doJSON(ctx, c, http.MethodPut, topicURL(base, topic), in, nil)
	return err
}
