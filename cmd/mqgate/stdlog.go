package main

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// newStdLogger routes net/http's own messages (TLS handshake errors,
// panics it recovered) into zerolog at warn level.
func newStdLogger(l zerolog.Logger) *log.Logger {
	return log.New(zerologWriter{l}, "", 0)
}

type zerologWriter struct{ l zerolog.Logger }

func (w zerologWriter) Write(p []byte) (int, error) {
	w.l.Warn().Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
