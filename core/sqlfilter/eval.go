package sqlfilter

import (
	"strconv"
	"strings"
)

// Lookup returns a property's value; ok is false when it is missing (NULL).
type Lookup func(name string) (value string, ok bool)

// Match reports whether the expression is TRUE for the properties.
func (e *Expr) Match(get Lookup) bool { return e.root.eval(get) == True }

// Eval is the expression's three-valued result.
func (e *Expr) Eval(get Lookup) Tri { return e.root.eval(get) }

// Tri is a three-valued truth (SQL92).
type Tri int8

const (
	False Tri = iota
	True
	Unknown
)

func (t Tri) String() string {
	switch t {
	case True:
		return "TRUE"
	case False:
		return "FALSE"
	}
	return "UNKNOWN"
}

func triOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// valueKind is the type of a value.
type valueKind uint8

const (
	kNull valueKind = iota
	kStr            // a string literal
	kProp           // a property's value: a string that may read as a number
	kNum
	kBool
)

type number struct {
	i     int64
	f     float64
	isInt bool
}

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

// compare returns -1, 0 or 1.
func (a number) compare(b number) int {
	if a.isInt && b.isInt {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	x, y := a.float(), b.float()
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

type value struct {
	kind valueKind
	s    string
	n    number
	b    bool
}

// operand is a property (prop != "") or a literal.
type operand struct {
	prop string
	val  value
}

func (o operand) get(get Lookup) value {
	if o.prop == "" {
		return o.val
	}
	s, ok := get(o.prop)
	if !ok {
		return value{}
	}
	return value{kind: kProp, s: s}
}

// parseNumber reads a property value as a number: an integer, else a
// plain decimal (no NaN, Inf or hex).
func parseNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{i: i, isInt: true}, true
	}
	if s == "" || strings.ContainsAny(s, "xXnNiI_pP") {
		return number{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return number{}, false
	}
	return number{f: f}, true
}

// asNumber returns v as a number when it is one or a property that reads as one.
func asNumber(v value) (number, bool) {
	switch v.kind {
	case kNum:
		return v.n, true
	case kProp:
		return parseNumber(v.s)
	}
	return number{}, false
}

// equal is the = of two non-null values.
func equal(a, b value) bool {
	if a.kind == kProp && b.kind == kProp {
		return a.s == b.s
	}
	if b.kind == kProp {
		a, b = b, a
	}
	if a.kind == kProp {
		switch b.kind {
		case kStr:
			return a.s == b.s
		case kNum:
			n, ok := parseNumber(a.s)
			return ok && n.compare(b.n) == 0
		case kBool:
			switch {
			case strings.EqualFold(a.s, "true"):
				return b.b
			case strings.EqualFold(a.s, "false"):
				return !b.b
			}
			return false
		}
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kStr:
		return a.s == b.s
	case kNum:
		return a.n.compare(b.n) == 0
	case kBool:
		return a.b == b.b
	}
	return false
}

// cond is a boolean node.
type cond interface{ eval(Lookup) Tri }

type orCond struct{ l, r cond }

func (c orCond) eval(get Lookup) Tri {
	l := c.l.eval(get)
	if l == True {
		return True
	}
	r := c.r.eval(get)
	switch {
	case r == True:
		return True
	case l == Unknown || r == Unknown:
		return Unknown
	}
	return False
}

type andCond struct{ l, r cond }

func (c andCond) eval(get Lookup) Tri {
	l := c.l.eval(get)
	if l == False {
		return False
	}
	r := c.r.eval(get)
	switch {
	case r == False:
		return False
	case l == Unknown || r == Unknown:
		return Unknown
	}
	return True
}

type notCond struct{ x cond }

func (c notCond) eval(get Lookup) Tri {
	switch c.x.eval(get) {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

type cmpCond struct {
	op   string
	l, r operand
}

func (c cmpCond) eval(get Lookup) Tri {
	a, b := c.l.get(get), c.r.get(get)
	if a.kind == kNull || b.kind == kNull {
		return Unknown
	}
	switch c.op {
	case "=":
		return triOf(equal(a, b))
	case "<>":
		return triOf(!equal(a, b))
	}
	x, ok1 := asNumber(a)
	y, ok2 := asNumber(b)
	if !ok1 || !ok2 {
		return False // a type mismatch is false, not unknown
	}
	d := x.compare(y)
	switch c.op {
	case "<":
		return triOf(d < 0)
	case "<=":
		return triOf(d <= 0)
	case ">":
		return triOf(d > 0)
	}
	return triOf(d >= 0)
}

type betweenCond struct {
	x, lo, hi operand
	not       bool
}

func (c betweenCond) eval(get Lookup) Tri {
	r := andCond{cmpCond{">=", c.x, c.lo}, cmpCond{"<=", c.x, c.hi}}.eval(get)
	if c.not {
		return notCond{constCond(r)}.eval(get)
	}
	return r
}

type constCond Tri

func (c constCond) eval(Lookup) Tri { return Tri(c) }

type inCond struct {
	x    operand
	list []value
	not  bool
}

func (c inCond) eval(get Lookup) Tri {
	v := c.x.get(get)
	if v.kind == kNull {
		return Unknown
	}
	found := false
	for _, w := range c.list {
		if equal(v, w) {
			found = true
			break
		}
	}
	return triOf(found != c.not)
}

type isNullCond struct {
	x   operand
	not bool
}

func (c isNullCond) eval(get Lookup) Tri {
	return triOf((c.x.get(get).kind == kNull) != c.not)
}

// boolProp is a bare property used as a condition.
type boolProp struct{ name string }

func (c boolProp) eval(get Lookup) Tri {
	s, ok := get(c.name)
	switch {
	case !ok:
		return Unknown
	case strings.EqualFold(s, "true"):
		return True
	}
	return False
}

type boolConst struct{ b bool }

func (c boolConst) eval(Lookup) Tri { return triOf(c.b) }
