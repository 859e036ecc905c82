package webhook

import (
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Limits and defaults of a group's push settings (API.md "push").
const (
	DefaultMaxInFlight    = 16
	MaxMaxInFlight        = 1024
	DefaultTimeoutSeconds = 15
	MaxTimeoutSeconds     = 300
	MaxBatchSize          = 32
	DefaultBatchSize      = 1

	// SecretPrefix marks a Standard Webhooks secret: the rest is base64 and
	// the decoded bytes are the HMAC key.
	SecretPrefix = "whsec_"
	// MinSecretBytes is the shortest signing key a new push config may
	// have (Standard Webhooks: 24 to 64 bytes), counted on the decoded key
	// of a "whsec_" secret and on the bytes of a raw one.
	MinSecretBytes = 24
)

// config is a PushConfig with defaults applied and the secret decoded.
type config struct {
	url         string
	secret      []byte
	timeout     time.Duration
	maxInFlight int
	batchSize   int
}

// ValidateConfig checks a group's push settings and returns a
// core.FieldError naming the JSON field ("push.url", ...) of the first
// problem. Zero MaxInFlight, TimeoutSeconds and BatchSize mean defaults.
// The api layer calls it so that a bad push block is a 400, not a pusher
// that cannot start.
//
// It is stricter than what a running pusher accepts (New, Update), so a
// group stored before a rule existed keeps being delivered: the signing
// key must have at least MinSecretBytes bytes.
func ValidateConfig(c core.PushConfig) error {
	cfg, err := resolve(c)
	if err != nil {
		return err
	}
	if c.Secret != "" && len(cfg.secret) < MinSecretBytes {
		what := "a raw secret"
		if strings.HasPrefix(c.Secret, SecretPrefix) {
			what = "the base64 after " + SecretPrefix
		}
		return core.FieldError("push.secret",
			"the signing key must have at least %d bytes (Standard Webhooks: 24 to 64); %s decodes to %d (generate one with: echo %s$(openssl rand -base64 32))",
			MinSecretBytes, what, len(cfg.secret), SecretPrefix)
	}
	return nil
}

func resolve(c core.PushConfig) (config, error) {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return config{}, core.FieldError("push.url", "is required")
	case err != nil:
		return config{}, core.FieldError("push.url", "is not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return config{}, core.FieldError("push.url", "must be an http or https URL")
	case u.Host == "":
		return config{}, core.FieldError("push.url", "must name a host")
	case u.User != nil:
		// Credentials in the URL would be sent to every redirect target we
		// refuse and show up in status; use the signature instead.
		return config{}, core.FieldError("push.url", "must not carry user:password")
	}
	cfg := config{
		url:         c.URL,
		timeout:     DefaultTimeoutSeconds * time.Second,
		maxInFlight: DefaultMaxInFlight,
		batchSize:   DefaultBatchSize,
	}
	switch {
	case c.MaxInFlight < 0 || c.MaxInFlight > MaxMaxInFlight:
		return config{}, core.FieldError("push.maxInFlight", "must be between 1 and %d", MaxMaxInFlight)
	case c.MaxInFlight > 0:
		cfg.maxInFlight = c.MaxInFlight
	}
	switch {
	case c.TimeoutSeconds < 0 || c.TimeoutSeconds > MaxTimeoutSeconds:
		return config{}, core.FieldError("push.timeoutSeconds", "must be between 1 and %d", MaxTimeoutSeconds)
	case c.TimeoutSeconds > 0:
		cfg.timeout = time.Duration(c.TimeoutSeconds) * time.Second
	}
	switch {
	case c.BatchSize < 0 || c.BatchSize > MaxBatchSize:
		return config{}, core.FieldError("push.batchSize", "must be between 1 and %d", MaxBatchSize)
	case c.BatchSize > 0:
		cfg.batchSize = c.BatchSize
	}
	if c.Secret != "" {
		// No secret: requests go unsigned (no webhook-signature header).
		// Allowed because the API makes the secret optional; docs advise
		// against it.
		if cfg.secret, err = DecodeSecret(c.Secret); err != nil {
			return config{}, core.FieldError("push.secret", "%v", err)
		}
	}
	return cfg, nil
}

// DecodeSecret turns a configured secret into the HMAC key. A secret of
// the form "whsec_<base64>" (Standard Webhooks) is base64-decoded; any other
// non-empty string is used as raw bytes, so a plain passphrase also works
// (receivers must then use the same raw bytes). An empty secret is an
// error here (nothing to verify with); a push config without a secret
// sends unsigned requests.
func DecodeSecret(secret string) ([]byte, error) {
	if secret == "" {
		return nil, core.Errorf(core.EInvalid, "a signing secret is required")
	}
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, core.Errorf(core.EInvalid, "a %q secret must be base64 after the prefix", SecretPrefix)
	}
	if len(key) < 16 {
		return nil, core.Errorf(core.EInvalid, "a %q secret must decode to at least 16 bytes", SecretPrefix)
	}
	return key, nil
}
