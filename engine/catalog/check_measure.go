package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"datadesk/engine/typing"
)

var measureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func (c *checker) measures() error {
	a := c.p.Analysis
	ms := a.Measures
	if len(ms) > MaxMeasures {
		return qerr("measures", "at most %d measures are allowed", MaxMeasures)
	}
	if len(ms) == 0 {
		ms = []Measure{{Op: "count"}}
	}
	// Names first: an expression may use a measure named after it.
	terms := make([]MeasureTerm, len(ms))
	for i, m := range ms {
		field := fmt.Sprintf("measures[%d]", i)
		t, err := c.measureHead(field, m)
		if err != nil {
			return err
		}
		terms[i] = t
	}
	c.p.Measures = terms
	for i, m := range ms {
		if err := c.measureBody(fmt.Sprintf("measures[%d]", i), i, m); err != nil {
			return err
		}
	}
	if err := c.checkCycles(); err != nil {
		return err
	}
	for i := range c.p.Measures {
		c.p.Measures[i].Type = c.measureType(i)
	}
	for _, g := range c.p.Groups {
		c.p.addOut(g.Name, g.Type(), "")
	}
	for _, m := range c.p.Measures {
		c.p.addOut(m.Name, m.Type, m.Op)
	}
	for i, m := range c.p.Measures {
		if m.Window() && m.Op != "rank" && !Numeric(c.p.Measures[m.Of].Type) {
			return qerr(fmt.Sprintf("measures[%d].of", i), "%s follows a number; %s is %s", m.Op, c.p.Measures[m.Of].Name, c.p.Measures[m.Of].Type)
		}
	}
	return nil
}

// measureHead resolves a measure's op, column and name.
func (c *checker) measureHead(field string, m Measure) (MeasureTerm, error) {
	t := MeasureTerm{Op: m.Op, Name: m.Name, Of: -1}
	if m.Expr != "" {
		if m.Op != "" && m.Op != "expr" {
			return t, qerr(field+".op", "a measure has an op or an expr, not both")
		}
		t.Op = "expr"
		if m.Name == "" {
			return t, qerr(field+".name", "an expr measure needs a name")
		}
	}
	op, known := measureOp(t.Op)
	if !known && t.Op != "expr" {
		return t, qerr(field+".op", "unknown measure %q", m.Op).WithAllowed(MeasureOps...)
	}
	if m.Column != "" {
		col, err := c.column(field+".column", m.Column)
		if err != nil {
			return t, err
		}
		t.Col = col
	}
	if t.Name == "" {
		t.Name = defaultMeasureName(op, t, m)
	} else if !measureName.MatchString(t.Name) {
		return t, qerr(field+".name", "name %q must be letters, digits and _, not starting with a digit, up to 63 characters", t.Name)
	}
	return t, c.name(field+".name", t.Name)
}

// defaultMeasureName is a measure's name when the call gives none: its
// op's Named, filled in.
func defaultMeasureName(op MeasureOp, t MeasureTerm, m Measure) string {
	col, p := "", 0.0
	if t.Col != nil {
		col = "_" + strings.ReplaceAll(t.Col.Key, ".", "_")
	}
	if m.P != nil {
		p = *m.P * 100
	}
	return strings.NewReplacer("{_column}", col, "{of}", m.Of,
		"{p}", strings.ReplaceAll(strconv.FormatFloat(p, 'f', -1, 64), ".", "_")).Replace(op.Named)
}

// measureBody checks what a measure reads: its column's type, its
// expression or the measure it follows.
func (c *checker) measureBody(field string, i int, m Measure) error {
	t := &c.p.Measures[i]
	noCol := func() error {
		if t.Col != nil {
			return qerr(field+".column", "%s takes no column", t.Op)
		}
		return nil
	}
	op, _ := measureOp(t.Op) // expr has no row: it takes none of these
	for _, arg := range []struct {
		name string
		set  bool
	}{{"p", m.P != nil}, {"of", m.Of != "" || len(m.Within) > 0}, {"direction", m.Direction != ""}, {"order_by", m.OrderBy != ""}} {
		if arg.set && !slices.Contains(op.Takes, arg.name) {
			if arg.name == "of" {
				return qerr(field+".of", "of and within apply to %s", takenBy("of"))
			}
			return qerr(field+"."+arg.name, "%s applies to %s", arg.name, takenBy(arg.name))
		}
	}
	if t.Op == "expr" {
		if err := noCol(); err != nil {
			return err
		}
		e, err := ParseExpr(field+".expr", m.Expr, func(name string) (int, error) {
			for j, o := range c.p.Measures {
				if o.Name == name {
					if j == i {
						return 0, fmt.Errorf("a measure cannot use itself")
					}
					if o.Window() {
						return 0, fmt.Errorf("%s is computed over the groups; an expression uses the groups' own measures", name)
					}
					return j, nil
				}
			}
			return 0, fmt.Errorf("no measure is named %q", name)
		})
		if err != nil {
			return err
		}
		t.Expr = e
		return nil
	}
	if op.Name == "" {
		return qerr(field+".op", "unknown op %q", t.Op).WithAllowed(MeasureOps...)
	}
	if slices.Contains(op.Takes, "p") {
		if m.P == nil || *m.P < 0 || *m.P > 1 {
			return qerr(field+".p", "%s needs p from 0 to 1 (0.9 is the 90th percentile)", t.Op)
		}
		t.P = *m.P
	}
	switch op.Column {
	case AnyColumn, NumberColumn, OrderedColumn:
		if t.Col == nil {
			return qerr(field+".column", "%s needs a column", t.Op)
		}
		if !op.Column.accepts(t.Col.Type) {
			return qerr(field+".column", "%s needs %s; %q is %s%s", t.Op, needs[op.Column], t.Col.Key, t.Col.typeSaid(), t.Col.numbersAdvice())
		}
	case MaybeNumber:
		if t.Col != nil && !op.Column.accepts(t.Col.Type) {
			return qerr(field+".column", "%s of a column needs a numeric column (its sum), and %q is %s; without a column it is the share of rows%s",
				t.Op, t.Col.Key, t.Col.typeSaid(), t.Col.numbersAdvice())
		}
	}
	if slices.Contains(op.Takes, "order_by") {
		return c.firstLast(field, t, m)
	}
	if op.OverGroups {
		return c.windowBody(field, t, m)
	}
	return nil
}

// firstLast checks a first or last measure's order: the number, date or
// timestamp column order_by names.
func (c *checker) firstLast(field string, t *MeasureTerm, m Measure) error {
	if m.OrderBy == "" {
		return qerr(field+".order_by", "%s needs order_by: the date, timestamp or number column that says which row is %s", t.Op, t.Op)
	}
	col, err := c.column(field+".order_by", m.OrderBy)
	if err != nil {
		return err
	}
	if !Numeric(col.Type) && col.Type != typing.TypeDate && col.Type != typing.TypeTimestamp {
		return qerr(field+".order_by", "order_by needs a date, timestamp or number column; %q is %s", col.Key, col.typeSaid())
	}
	t.OrderBy = col
	return nil
}

// checkCycles refuses an expression that uses itself through others. Each
// measure is walked once (a measure done is never entered again), so the
// work is linear in the references written, however they repeat.
func (c *checker) checkCycles() error {
	const (
		fresh = iota
		open
		done
	)
	state := make([]int, len(c.p.Measures))
	var walk func(i int) error
	walk = func(i int) error {
		switch state[i] {
		case open:
			return qerr(fmt.Sprintf("measures[%d].expr", i), "measure %q uses itself through other measures", c.p.Measures[i].Name)
		case done:
			return nil
		}
		state[i] = open
		for _, r := range c.p.Measures[i].Expr.Refs() {
			if err := walk(r); err != nil {
				return err
			}
		}
		state[i] = done
		return nil
	}
	for i := range c.p.Measures {
		if err := walk(i); err != nil {
			return err
		}
	}
	return nil
}

// measureType is the catalog type of measure i's values.
func (c *checker) measureType(i int) string {
	m := c.p.Measures[i]
	return valueType(m.Op, m.Col, func() string { return c.measureType(m.Of) })
}

// outName is how an output column is named in top.per and sort_by: a
// lookup column is written lookup.key in filters and groups, and both
// spellings name its output column lookup_key.
func outName(name string) string { return strings.ReplaceAll(name, ".", "_") }

func (c *checker) measureIndex(field, name string) (int, error) {
	var names []string
	for i, m := range c.p.Measures {
		if m.Name == name {
			return i, nil
		}
		names = append(names, m.Name)
	}
	return 0, qerr(field, "%q is not a measure", name).WithAllowed(names...)
}
