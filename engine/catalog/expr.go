package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// Expr is a measure computed from others: a number, a reference to
// another measure, or + - * / of two expressions (Op '+', '-', '*', '/'),
// or the negation of one ('~'). It holds no text of the call: a number
// is parsed, a name resolved to the measure's index.
type Expr struct {
	Op   byte
	Num  float64
	Ref  int
	L, R *Expr
}

// Expression bounds.
const (
	maxExprChars = 200
	maxExprDepth = 20
)

// exprParser reads the grammar
//
//	expr   = term { ("+" | "-") term }
//	term   = factor { ("*" | "/") factor }
//	factor = "-" factor | number | name | "(" expr ")"
//
// where a name is another measure's and a number is written as JSON
// writes one. Errors name the position, counted in characters from 1.
type exprParser struct {
	src   []rune
	pos   int
	depth int
	field string
	// ref resolves a name, or says why it cannot be used.
	ref func(name string) (int, error)
}

// ParseExpr reads src, resolving names with ref. field names the argument
// in errors.
func ParseExpr(field, src string, ref func(name string) (int, error)) (*Expr, error) {
	if len([]rune(src)) > maxExprChars {
		return nil, qerr(field, "an expression has at most %d characters", maxExprChars)
	}
	p := &exprParser{src: []rune(src), field: field, ref: ref}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.src) {
		return nil, p.fail("expected + - * / or the end, found %q", string(p.src[p.pos]))
	}
	return e, nil
}

func (p *exprParser) fail(format string, args ...any) error {
	return qerr(p.field, "at position %d of %q: "+format, append([]any{p.pos + 1, string(p.src)}, args...)...)
}

func (p *exprParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// peek returns the next character past spaces, or 0 at the end.
func (p *exprParser) peek() rune {
	p.space()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *exprParser) expr() (*Expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxExprDepth {
		return nil, p.fail("the expression nests too deeply")
	}
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '+' || c == '-'; c = p.peek() {
		p.pos++
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: byte(c), L: l, R: r}
	}
	return l, nil
}

func (p *exprParser) term() (*Expr, error) {
	l, err := p.factor()
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '*' || c == '/'; c = p.peek() {
		p.pos++
		r, err := p.factor()
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: byte(c), L: l, R: r}
	}
	return l, nil
}

func (p *exprParser) factor() (*Expr, error) {
	c := p.peek()
	switch {
	case c == 0:
		return nil, p.fail("expected a measure name, a number or (, found the end")
	case c == '-':
		p.pos++
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxExprDepth {
			return nil, p.fail("the expression nests too deeply")
		}
		e, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: '~', L: e}, nil
	case c == '(':
		p.pos++
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.fail("expected ), found %s", p.found())
		}
		p.pos++
		return e, nil
	case c >= '0' && c <= '9' || c == '.':
		start := p.pos
		for p.pos < len(p.src) && strings.ContainsRune("0123456789.eE", p.src[p.pos]) ||
			p.pos > start && p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') && (p.src[p.pos-1] == 'e' || p.src[p.pos-1] == 'E') {
			p.pos++
		}
		text := string(p.src[start:p.pos])
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.pos = start
			return nil, p.fail("%q is not a number", text)
		}
		return &Expr{Op: '#', Num: f}, nil
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.pos
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' ||
			p.src[p.pos] >= 'A' && p.src[p.pos] <= 'Z' || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
			p.pos++
		}
		name := string(p.src[start:p.pos])
		i, err := p.ref(name)
		if err != nil {
			p.pos = start
			return nil, p.fail("%v", err)
		}
		return &Expr{Op: '$', Ref: i}, nil
	}
	return nil, p.fail("expected a measure name, a number or (, found %s", p.found())
}

func (p *exprParser) found() string {
	if p.pos >= len(p.src) {
		return "the end"
	}
	return fmt.Sprintf("%q", string(p.src[p.pos]))
}

// Refs returns the measures e reads.
func (e *Expr) Refs() []int {
	if e == nil {
		return nil
	}
	out := append(e.L.Refs(), e.R.Refs()...)
	if e.Op == '$' {
		out = append(out, e.Ref)
	}
	return out
}
