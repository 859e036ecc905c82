package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and its
// key into dir and returns the paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "mqgate e2e"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// backends runs fn once per backend: embedded (no extra flags) and
// jetstream (over an in-process single-node JetStream server).
func backends(t *testing.T, fn func(t *testing.T, flags []string)) {
	t.Run("embedded", func(t *testing.T) { fn(t, nil) })
	t.Run("jetstream", func(t *testing.T) {
		cl := natsCluster(t, 1)
		fn(t, jsFlags(t, cl, filepath.Join(t.TempDir(), "handle.key")))
	})
}

// TestTLS serves HTTPS with --tls-cert/--tls-key (through MQGATE_TLS_*) on
// both backends: HTTP/2 is negotiated, the API works, and plain HTTP to
// the port is not served. Every log line of the run is strict JSON (no
// duplicate keys).
func TestTLS(t *testing.T) { backends(t, testTLS) }

func testTLS(t *testing.T, flags []string) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	t.Setenv("MQGATE_TLS_CERT", certFile)
	t.Setenv("MQGATE_TLS_KEY", keyFile)
	s := startServer(t, t.TempDir(), flags...)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	base := "https://" + s.addr

	req, _ := http.NewRequest("PUT", base+"/v1/topics/secure", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.ProtoMajor != 2 {
		t.Fatalf("PUT over TLS: %d %s, want 201 over HTTP/2", resp.StatusCode, resp.Proto)
	}
	resp, err = c.Post(base+"/v1/topics/secure/messages", "application/json", strings.NewReader(`{"body":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("publish over TLS: %d %s", resp.StatusCode, body)
	}
	// A problem over HTTP/2 is problem+json like any other.
	resp, err = c.Get(base + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("404 over TLS: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// Plain HTTP on the TLS port gets no API answer.
	if r, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + s.addr + "/healthz"); err == nil {
		r.Body.Close()
		if r.StatusCode == 200 {
			t.Fatal("plain HTTP served on the TLS port")
		}
	}

	// Strict JSON logs: parse every line with duplicate names refused.
	s.stop(t)
	for _, line := range strings.Split(strings.TrimSpace(s.Logs()), "\n") {
		var v map[string]any
		if err := jsonv2.Unmarshal([]byte(line), &v, jsontext.AllowDuplicateNames(false)); err != nil {
			t.Fatalf("log line is not strict JSON (%v): %s", err, line)
		}
	}
	var listening struct{ TLS bool }
	for _, line := range strings.Split(s.Logs(), "\n") {
		if strings.Contains(line, `"message":"listening"`) {
			_ = json.Unmarshal([]byte(line), &listening)
		}
	}
	if !listening.TLS {
		t.Fatal(`the "listening" line does not say tls: true`)
	}
}

// TestH2C: --h2c serves cleartext HTTP/2 (prior knowledge) and still
// HTTP/1.1 on the same port, on both backends.
func TestH2C(t *testing.T) {
	backends(t, func(t *testing.T, flags []string) {
		s := startServer(t, t.TempDir(), append(flags, "--h2c")...)
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		req, _ := http.NewRequest("PUT", "http://"+s.addr+"/v1/topics/h2c", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || resp.ProtoMajor != 2 {
			t.Fatalf("PUT over h2c: %d %s, want 201 over HTTP/2", resp.StatusCode, resp.Proto)
		}
		want(t, s.do(t, "GET", "/v1/topics/h2c", nil), 200) // HTTP/1.1 still
	})
}

// TestAccessLogOff: --access-log=false logs no request line for a 2xx or
// 4xx answer, on both backends.
func TestAccessLogOff(t *testing.T) {
	backends(t, func(t *testing.T, flags []string) {
		s := startServer(t, t.TempDir(), append(flags, "--access-log=false")...)
		want(t, s.do(t, "PUT", "/v1/topics/quiet", nil), 201)
		want(t, s.do(t, "GET", "/v1/topics/missing", nil), 404)
		s.stop(t)
		if strings.Contains(s.Logs(), `"message":"request"`) {
			t.Fatalf("--access-log=false logged requests:\n%s", s.Logs())
		}
	})
}
