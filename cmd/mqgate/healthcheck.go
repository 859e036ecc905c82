package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// healthcheck is the Docker HEALTHCHECK: scratch images have no curl, so
// the binary asks its own /healthz on the loopback address. Against a
// --tls-cert server it speaks HTTPS: the probe runs in the server's
// container with the server's environment, so MQGATE_TLS_CERT names the
// very certificate the server presents, and the probe trusts exactly the
// certificates in that file. The host name is not checked (the probe
// dials 127.0.0.1, which a real certificate seldom names); the chain is.
// --insecure-skip-verify is for a probe that cannot read the file.
func healthcheck(args []string, stderr io.Writer) int {
	addr := DefaultConfig().Addr
	if v := os.Getenv(envName("addr")); v != "" {
		addr = v
	}
	fs := flag.NewFlagSet("mqgate healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", os.Getenv("MQGATE_URL"), "the server's base URL, as for every client command (env MQGATE_URL); without it, the local server at --addr")
	fs.StringVar(&addr, "addr", addr, "the local server's listen address, when no --url (env MQGATE_ADDR)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	certFile := fs.String("tls-cert", os.Getenv(envName("tls-cert")),
		"the server's --tls-cert file: speak HTTPS and trust only the certificates in it (env MQGATE_TLS_CERT)")
	insecure := fs.Bool("insecure-skip-verify", false, "speak HTTPS without verifying the server's certificate (a loopback probe that cannot read --tls-cert)")
	// Exit codes: 0 healthy, 1 anything else (usage errors included):
	// Docker's HEALTHCHECK reserves 2.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	tr := &http.Transport{DisableKeepAlives: true, ForceAttemptHTTP2: true}
	scheme := "http"
	switch {
	case *insecure:
		scheme = "https"
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // asked for, loopback probe
	case *certFile != "":
		cfg, err := trustCertFile(*certFile)
		if err != nil {
			fmt.Fprintln(stderr, "healthcheck:", err)
			return 1
		}
		scheme, tr.TLSClientConfig = "https", cfg
	}
	// --url names its own scheme; the TLS settings above apply to https.
	target := strings.TrimRight(*url, "/") + "/healthz"
	if *url == "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			fmt.Fprintln(stderr, "healthcheck:", err)
			return 1
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		target = scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	}
	client := &http.Client{Timeout: *timeout, Transport: tr}
	resp, err := client.Get(target)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(stderr, "healthcheck: status", resp.Status)
		return 1
	}
	return 0
}

// trustCertFile is a TLS client config that accepts a server whose chain
// verifies against the certificates in file (the leaf itself, or the CA
// that signed it, when the file holds the chain), whatever host name the
// certificate names.
func trustCertFile(file string) (*tls.Config, error) {
	pemBytes, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("--tls-cert %s: no PEM certificate in it", file)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The standard verification minus the host name: done by hand in
		// VerifyConnection, which runs on every handshake.
		InsecureSkipVerify: true, //nolint:gosec // verified below against roots
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			if err != nil {
				return fmt.Errorf("the server's certificate is not trusted by %s: %w", file, err)
			}
			return nil
		},
	}, nil
}
