// Package jsonscan is the small JSON scanner under the fast decoders of
// the hot frames: the server's publish, batch, ack and stream frames
// (api) and the Go stream client's deliveries and confirms
// (apiclient/stream). It reads a strict subset — strings without escapes
// or control characters, objects, arrays — and reports false for
// anything else, which its callers then hand to the general decoder, so
// the subset never decides what is valid JSON.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// Scanner reads B from I. Callers add their own value readers and may
// move I themselves.
type Scanner struct {
	B []byte
	I int
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Next skips white space and consumes c if it comes next.
func (s *Scanner) Next(c byte) bool {
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.WS()
	return s.I == len(s.B)
}

// Raw reads a string without escapes or control characters (valid
// UTF-8) and returns its bytes in B.
func (s *Scanner) Raw() ([]byte, bool) {
	if !s.Next('"') {
		return nil, false
	}
	n := bytes.IndexByte(s.B[s.I:], '"')
	if n < 0 {
		return nil, false
	}
	v := s.B[s.I : s.I+n]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, false // an escape (perhaps of a quote): the general decoder's
	}
	// Control characters and non-ASCII, eight bytes at a time ("Bit
	// Twiddling Hacks": some byte of x is below 0x20 exactly when
	// (x - 0x20*ones) &^ x has a high bit).
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var below, high uint64
	j := 0
	for ; j+8 <= len(v); j += 8 {
		x := binary.LittleEndian.Uint64(v[j:])
		below |= (x - 0x20*ones) &^ x
		high |= x
	}
	for ; j < len(v); j++ {
		x := uint64(v[j])
		below |= (x - 0x20) &^ x
		high |= x
	}
	if below&highs != 0 || high&highs != 0 && !utf8.Valid(v) {
		return nil, false
	}
	s.I += n + 1
	return v, true
}

// Name reads a member name and its colon.
func (s *Scanner) Name() ([]byte, bool) {
	v, ok := s.Raw()
	return v, ok && s.Next(':')
}

// Object calls member for each member of an object until it reports
// false (then Object does too).
func (s *Scanner) Object(member func(name []byte) bool) bool {
	if !s.Next('{') {
		return false
	}
	if s.Next('}') {
		return true
	}
	for {
		name, ok := s.Name()
		if !ok || !member(name) {
			return false
		}
		if s.Next(',') {
			continue
		}
		return s.Next('}')
	}
}
