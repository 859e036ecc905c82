package sqlfilter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp     // = <> < <= > >=
	tLParen // (
	tRParen // )
	tComma  // ,
	tSign   // + or - before a number
	// Keywords.
	tAnd
	tOr
	tNot
	tBetween
	tIn
	tIs
	tNull
	tTrue
	tFalse
)

var keywords = map[string]tokKind{
	"AND": tAnd, "OR": tOr, "NOT": tNot, "BETWEEN": tBetween, "IN": tIn,
	"IS": tIs, "NULL": tNull, "TRUE": tTrue, "FALSE": tFalse,
}

// token is one lexeme; pos is its 1-based character (rune) position.
type token struct {
	kind tokKind
	text string // identifier, string value, number text or operator
	pos  int
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return fmt.Sprintf("string '%s'", t.text)
	case tIdent, tNumber, tOp:
		return fmt.Sprintf("%q", t.text)
	default:
		return strings.ToUpper(t.text)
	}
}

// SyntaxError is a bad expression: Pos is the 1-based character position.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at %d: %s", e.Pos, e.Msg) }

// lexer turns the source into tokens, all at once (expressions are short).
type lexer struct {
	src  string
	i    int // byte offset
	char int // rune position of i, 1-based
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || (r >= '0' && r <= '9') || r == '.' || r == '-'
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (l *lexer) peek() (rune, int) {
	if l.i >= len(l.src) {
		return 0, 0
	}
	return utf8.DecodeRuneInString(l.src[l.i:])
}

func (l *lexer) advance(size int) {
	l.i += size
	l.char++
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src, char: 1}
	var toks []token
	for {
		r, size := l.peek()
		for size > 0 && (r == ' ' || r == '\t' || r == '\n' || r == '\r') {
			l.advance(size)
			r, size = l.peek()
		}
		pos := l.char
		if size == 0 {
			return append(toks, token{kind: tEOF, pos: pos}), nil
		}
		if r == utf8.RuneError && size == 1 {
			return nil, &SyntaxError{pos, "invalid UTF-8"}
		}
		switch {
		case isIdentStart(r):
			start := l.i
			for size > 0 && isIdentPart(r) {
				l.advance(size)
				r, size = l.peek()
			}
			word := src[start:l.i]
			if k, ok := keywords[strings.ToUpper(word)]; ok {
				toks = append(toks, token{kind: k, text: word, pos: pos})
			} else {
				toks = append(toks, token{kind: tIdent, text: word, pos: pos})
			}
		case isDigit(r) || (r == '.' && l.i+1 < len(src) && isDigit(rune(src[l.i+1]))):
			start := l.i
			for size > 0 && isDigit(r) {
				l.advance(size)
				r, size = l.peek()
			}
			if r == '.' {
				l.advance(size)
				r, size = l.peek()
				for size > 0 && isDigit(r) {
					l.advance(size)
					r, size = l.peek()
				}
			}
			if r == 'e' || r == 'E' {
				l.advance(size)
				r, size = l.peek()
				if r == '+' || r == '-' {
					l.advance(size)
					r, size = l.peek()
				}
				if !isDigit(r) {
					return nil, &SyntaxError{l.char, "expected the digits of an exponent"}
				}
				for size > 0 && isDigit(r) {
					l.advance(size)
					r, size = l.peek()
				}
			}
			if size > 0 && isIdentStart(r) {
				return nil, &SyntaxError{l.char, fmt.Sprintf("unexpected %q after a number", r)}
			}
			toks = append(toks, token{kind: tNumber, text: src[start:l.i], pos: pos})
		case r == '\'':
			l.advance(size)
			var b strings.Builder
			for {
				r, size = l.peek()
				if size == 0 {
					return nil, &SyntaxError{pos, "unterminated string"}
				}
				l.advance(size)
				if r == '\'' {
					if n, _ := l.peek(); n == '\'' {
						l.advance(1)
						b.WriteByte('\'')
						continue
					}
					break
				}
				b.WriteRune(r)
			}
			toks = append(toks, token{kind: tString, text: b.String(), pos: pos})
		case r == '=':
			l.advance(size)
			toks = append(toks, token{kind: tOp, text: "=", pos: pos})
		case r == '<' || r == '>':
			l.advance(size)
			op := string(r)
			if n, _ := l.peek(); n == '=' || (r == '<' && n == '>') {
				l.advance(1)
				op += string(n)
			}
			toks = append(toks, token{kind: tOp, text: op, pos: pos})
		case r == '(':
			l.advance(size)
			toks = append(toks, token{kind: tLParen, text: "(", pos: pos})
		case r == ')':
			l.advance(size)
			toks = append(toks, token{kind: tRParen, text: ")", pos: pos})
		case r == ',':
			l.advance(size)
			toks = append(toks, token{kind: tComma, text: ",", pos: pos})
		case r == '+' || r == '-':
			l.advance(size)
			toks = append(toks, token{kind: tSign, text: string(r), pos: pos})
		default:
			return nil, &SyntaxError{pos, fmt.Sprintf("unexpected %q", r)}
		}
	}
}
