package webhook

import (
	"net"
	"net/http"
	"time"
)

// newClient builds the http.Client of one pusher: its own Transport so a
// slow receiver's pool never starves another group, pool sized to
// maxInFlight so every in-flight request can keep its connection alive,
// the network guard on every dial, and no redirects: a 3xx is the
// receiver's answer and counts as a failure (following it would also let a
// receiver bounce us to a place the guard would have refused by name).
//
// No proxy from the environment: a proxy would dial for us and the guard
// would only see the proxy's address.
func newClient(g *guard, o Options, maxInFlight int) (*http.Client, *http.Transport) {
	d := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   g.control,
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       o.TLSConfig.Clone(),
		MaxConnsPerHost:       maxInFlight,
		MaxIdleConnsPerHost:   maxInFlight,
		MaxIdleConns:          maxInFlight,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	c := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c, tr
}
