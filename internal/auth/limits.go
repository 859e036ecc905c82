package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"time"
)

// MaxDelayBound is the longest "maxDelay" a key file may give: a delayed
// request holds its connection and a goroutine, so the wait is kept short
// of the server's write timeout (30 s by default).
const MaxDelayBound = 10 * time.Second

// Rates are the token-bucket limits of one scope (a key, or a topic or
// group entry of it). A zero rate is no limit. A burst defaults to one
// second's worth of its rate (at least 1).
type Rates struct {
	// PublishPerSecond limits published messages (a batch counts each).
	PublishPerSecond float64 `json:"publishPerSecond,omitempty"`
	PublishBurst     int     `json:"publishBurst,omitempty"`
	// PublishBytesPerSecond limits published body bytes (decoded).
	PublishBytesPerSecond float64 `json:"publishBytesPerSecond,omitempty"`
	PublishBytesBurst     int     `json:"publishBytesBurst,omitempty"`
	// DeliveriesPerSecond limits messages handed out by receive (and
	// streams).
	DeliveriesPerSecond float64 `json:"deliveriesPerSecond,omitempty"`
	DeliveriesBurst     int     `json:"deliveriesBurst,omitempty"`
	// ConcurrentReceives limits receive calls (long polls) in flight.
	ConcurrentReceives int `json:"concurrentReceives,omitempty"`
}

// Limits is a key's "limits" in the key file (docs/quotas.md).
type Limits struct {
	Rates
	// MaxDelay, when set, holds a request over a rate limit for up to
	// this long until its tokens are there, instead of answering 429 at
	// once (at most MaxDelayBound). Concurrency limits never wait.
	MaxDelay Duration `json:"maxDelay,omitempty"`
	// Topics are extra limits on the topics matching each pattern (the
	// first match applies); the key's own limits apply as well.
	Topics []TopicLimits `json:"topics,omitempty"`
	// Groups are extra limits on the groups matching each pattern.
	Groups []GroupLimits `json:"groups,omitempty"`
}

// TopicLimits are publish limits shared by the topics matching Topic.
type TopicLimits struct {
	// Topic is a pattern as in grants (pub:<pattern>).
	Topic string `json:"topic"`
	Rates
}

// GroupLimits are delivery and concurrency limits shared by the groups
// matching Group.
type GroupLimits struct {
	// Group is a pattern as in grants (sub:<pattern>).
	Group string `json:"group"`
	Rates
}

// Duration is a time.Duration written as a Go duration string ("500ms").
type Duration time.Duration

// UnmarshalJSON reads "500ms", "2s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("maxDelay must be a duration string such as \"500ms\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("maxDelay must be a duration string such as \"500ms\": %w", err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Burst is the bucket size for rate with the configured burst b: b, or
// one second's worth of rate, at least 1.
func Burst(rate float64, b int) int {
	if b > 0 {
		return b
	}
	return max(1, int(math.Ceil(rate)))
}

func (r Rates) check(publish, consume bool) error {
	rates := []struct {
		name  string
		rate  float64
		burst int
		ok    bool
	}{
		{"publishPerSecond", r.PublishPerSecond, r.PublishBurst, publish},
		{"publishBytesPerSecond", r.PublishBytesPerSecond, r.PublishBytesBurst, publish},
		{"deliveriesPerSecond", r.DeliveriesPerSecond, r.DeliveriesBurst, consume},
	}
	for _, x := range rates {
		switch {
		case !x.ok && (x.rate != 0 || x.burst != 0):
			return fmt.Errorf("%s does not apply here (topic entries take publish limits, group entries delivery and receive limits)", x.name)
		case x.rate < 0 || math.IsNaN(x.rate) || math.IsInf(x.rate, 0):
			return fmt.Errorf("%s must be a positive number", x.name)
		case x.burst < 0:
			return fmt.Errorf("the burst of %s must be positive", x.name)
		case x.burst > 0 && x.rate == 0:
			return fmt.Errorf("a burst without %s limits nothing; give the rate too", x.name)
		}
	}
	switch {
	case !consume && r.ConcurrentReceives != 0:
		return errors.New("concurrentReceives does not apply to topic entries")
	case r.ConcurrentReceives < 0:
		return errors.New("concurrentReceives must be positive")
	}
	return nil
}

// IsZero reports whether r limits nothing.
func (r Rates) IsZero() bool { return r == Rates{} }

// check validates a key's limits; an error names the field.
func (l *Limits) check() error {
	if err := l.Rates.check(true, true); err != nil {
		return err
	}
	if d := time.Duration(l.MaxDelay); d < 0 || d > MaxDelayBound {
		return fmt.Errorf("maxDelay must be between 0 and %v", MaxDelayBound)
	}
	for i, t := range l.Topics {
		if _, err := ParseGrant("pub:" + t.Topic); err != nil {
			return fmt.Errorf("topics[%d]: topic: %w", i, err)
		}
		if err := t.Rates.check(true, false); err != nil {
			return fmt.Errorf("topics[%d] %q: %w", i, t.Topic, err)
		}
	}
	for i, g := range l.Groups {
		if _, err := ParseGrant("sub:" + g.Group); err != nil {
			return fmt.Errorf("groups[%d]: group: %w", i, err)
		}
		if err := g.Rates.check(false, true); err != nil {
			return fmt.Errorf("groups[%d] %q: %w", i, g.Group, err)
		}
	}
	return nil
}

// TopicEntry is the index of the first topic entry matching name, or -1.
func (l *Limits) TopicEntry(name string) int {
	for i, t := range l.Topics {
		if ok, err := path.Match(t.Topic, name); err == nil && ok {
			return i
		}
	}
	return -1
}

// GroupEntry is the index of the first group entry matching name, or -1.
func (l *Limits) GroupEntry(name string) int {
	for i, g := range l.Groups {
		if ok, err := path.Match(g.Group, name); err == nil && ok {
			return i
		}
	}
	return -1
}
