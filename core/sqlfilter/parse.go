package sqlfilter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on an expression.
const (
	MaxLength = 4096 // characters
	MaxDepth  = 64   // nested NOTs and parentheses
)

// Expr is a parsed expression, safe for concurrent use.
type Expr struct {
	src  string
	root cond
}

// String is the expression as written.
func (e *Expr) String() string { return e.src }

// Parse parses and checks an expression. Errors are *SyntaxError.
func Parse(src string) (*Expr, error) {
	if n := utf8.RuneCountInString(src); n > MaxLength {
		return nil, &SyntaxError{MaxLength + 1, fmt.Sprintf("expression longer than %d characters", MaxLength)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, &SyntaxError{p.peek().pos, "empty expression"}
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &SyntaxError{t.pos, "unexpected " + t.describe() + ", expected AND, OR or the end"}
	}
	return &Expr{src: strings.TrimSpace(src), root: root}, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) or(depth int) (cond, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tOr {
		p.next()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = orCond{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (cond, error) {
	l, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAnd {
		p.next()
		r, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		l = andCond{l, r}
	}
	return l, nil
}

func (p *parser) not(depth int) (cond, error) {
	if p.peek().kind != tNot {
		return p.primary(depth)
	}
	t := p.next()
	if depth >= MaxDepth {
		return nil, &SyntaxError{t.pos, fmt.Sprintf("nested deeper than %d", MaxDepth)}
	}
	x, err := p.not(depth + 1)
	if err != nil {
		return nil, err
	}
	return notCond{x}, nil
}

func (p *parser) primary(depth int) (cond, error) {
	if t := p.peek(); t.kind == tLParen {
		p.next()
		if depth >= MaxDepth {
			return nil, &SyntaxError{t.pos, fmt.Sprintf("nested deeper than %d", MaxDepth)}
		}
		c, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tRParen {
			return nil, &SyntaxError{t.pos, "expected ')', found " + t.describe()}
		}
		return c, nil
	}
	start := p.peek()
	x, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch t.kind {
	case tOp:
		p.next()
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		if t.text != "=" && t.text != "<>" {
			if err := needNumber(x, start.pos); err != nil {
				return nil, err
			}
			if err := needNumber(y, p.toks[p.i-1].pos); err != nil {
				return nil, err
			}
		}
		return cmpCond{op: t.text, l: x, r: y}, nil
	case tIs:
		p.next()
		not := false
		if p.peek().kind == tNot {
			p.next()
			not = true
		}
		if n := p.next(); n.kind != tNull {
			return nil, &SyntaxError{n.pos, "expected NULL, found " + n.describe()}
		}
		return isNullCond{x: x, not: not}, nil
	case tNot, tBetween, tIn:
		not := false
		if t.kind == tNot {
			p.next()
			not = true
			t = p.peek()
			if t.kind != tBetween && t.kind != tIn {
				return nil, &SyntaxError{t.pos, "expected BETWEEN or IN after NOT, found " + t.describe()}
			}
		}
		p.next()
		if t.kind == tBetween {
			if err := needNumber(x, start.pos); err != nil {
				return nil, err
			}
			lo, err := p.numberOperand()
			if err != nil {
				return nil, err
			}
			if a := p.next(); a.kind != tAnd {
				return nil, &SyntaxError{a.pos, "expected AND of BETWEEN, found " + a.describe()}
			}
			hi, err := p.numberOperand()
			if err != nil {
				return nil, err
			}
			return betweenCond{x: x, lo: lo, hi: hi, not: not}, nil
		}
		return p.in(x, not)
	}
	// A bare operand: a boolean property or literal.
	switch {
	case x.prop != "":
		return boolProp{x.prop}, nil
	case x.val.kind == kBool:
		return boolConst{x.val.b}, nil
	}
	return nil, &SyntaxError{t.pos, "expected a comparison, BETWEEN, IN or IS after " + start.describe() + ", found " + t.describe()}
}

func (p *parser) in(x operand, not bool) (cond, error) {
	if t := p.next(); t.kind != tLParen {
		return nil, &SyntaxError{t.pos, "expected '(' after IN, found " + t.describe()}
	}
	var list []value
	for {
		t := p.peek()
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		if y.prop != "" || y.val.kind == kBool {
			return nil, &SyntaxError{t.pos, "expected a string or number in the IN list"}
		}
		list = append(list, y.val)
		t = p.next()
		if t.kind == tRParen {
			return inCond{x: x, list: list, not: not}, nil
		}
		if t.kind != tComma {
			return nil, &SyntaxError{t.pos, "expected ',' or ')', found " + t.describe()}
		}
	}
}

// operand reads a property or a literal.
func (p *parser) operand() (operand, error) {
	t := p.next()
	switch t.kind {
	case tIdent:
		return operand{prop: t.text}, nil
	case tString:
		return operand{val: value{kind: kStr, s: t.text}}, nil
	case tTrue, tFalse:
		return operand{val: value{kind: kBool, b: t.kind == tTrue}}, nil
	case tSign:
		n := p.next()
		if n.kind != tNumber {
			return operand{}, &SyntaxError{n.pos, "expected a number after " + t.text}
		}
		return numberLiteral(t.text+n.text, t.pos)
	case tNumber:
		return numberLiteral(t.text, t.pos)
	case tNull:
		return operand{}, &SyntaxError{t.pos, "expected a value (NULL is only written after IS)"}
	}
	return operand{}, &SyntaxError{t.pos, "expected a value, found " + t.describe()}
}

func (p *parser) numberOperand() (operand, error) {
	pos := p.peek().pos
	x, err := p.operand()
	if err != nil {
		return x, err
	}
	return x, needNumber(x, pos)
}

func numberLiteral(text string, pos int) (operand, error) {
	if !strings.ContainsAny(text, ".eE") {
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return operand{}, &SyntaxError{pos, "integer out of range"}
		}
		return operand{val: value{kind: kNum, n: number{i: i, isInt: true}}}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) {
		return operand{}, &SyntaxError{pos, "decimal out of range"}
	}
	return operand{val: value{kind: kNum, n: number{f: f}}}, nil
}

// needNumber rejects a literal that is not a number where one is needed
// (RocketMQ's checkLessThanOperand).
func needNumber(x operand, pos int) error {
	if x.prop != "" || x.val.kind == kNum {
		return nil
	}
	return &SyntaxError{pos, "expected a number (only numbers are ordered)"}
}
