package catalog

// Text read where numbers are meant. A column the import kept as text
// (a header or units row stored as data, a note among the numbers)
// compares and orders as text, where "9" comes after "10" and "£" after
// every digit. A comparison with a number reads the values that are
// numbers as numbers and says how many were not; a min, max or sort that
// would order numbers as text is refused. Both are decided by counting
// the column's values (CheckTextUses), not by the import's reason.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"datadesk/engine/typing"
)

// ReadAgain is how a text column whose values are numbers becomes
// numeric: the stored file read again with its header named.
const ReadAgain = "read the file again with files.analyze_table's reading argument naming its header rows"

// TextUse is a text column read where numbers are usually meant:
// compared with a number (Cond.AsNumber), or ordered by a min, a max or
// a sort, which order text.
type TextUse struct {
	// Field is the argument that asked for it: filters[0], measures[1].column, sort_by.
	Field string
	// What is the op (gt, between, min, max) or sort_by.
	What string
	// Table holds Col (a lookup column's own table), Col as it names it.
	Table *Table
	Col   Column
	// Compare is a comparison with a number; otherwise an order.
	Compare bool
}

// textOrdered reports whether a min, max or sort of c orders its values
// as text: a text column that is not an identifier (an identifier's
// natural order puts its numbers in their order already).
func textOrdered(c *Column) bool { return c.Type == typing.TypeText && !c.Identifier }

// TextUses are the plan's text columns read where numbers are meant:
// its comparisons with numbers, and a sort of rows or groups by a text
// column.
func (p *Plan) TextUses() []TextUse {
	var uses []TextUse
	for _, c := range p.Conds {
		if c.AsNumber {
			uses = append(uses, TextUse{Field: c.Field, What: c.Op, Table: p.Table, Col: c.Col, Compare: true})
		}
	}
	var sorted *Column
	switch {
	case p.Sort == nil:
	case p.Sort.Col != nil:
		sorted = p.Sort.Col
	case p.Sort.Out < len(p.Groups):
		sorted = &p.Groups[p.Sort.Out]
	}
	if sorted != nil && textOrdered(sorted) {
		uses = append(uses, TextUse{Field: "sort_by", What: "sort_by", Table: p.Table, Col: *sorted})
	}
	return uses
}

// TextUses are the analysis's text columns read where numbers are
// meant: its filters' comparisons with numbers, min and max of text, and
// sort_by a group of a text column.
func (p *AnalysisPlan) TextUses() []TextUse {
	var uses []TextUse
	use := func(field, what string, c Column, compare bool) {
		t := p.Table
		if k, ok := strings.CutPrefix(c.Key, LookupPrefix); ok && p.Lookup != nil {
			t, c.Key = p.Lookup.Table, k
		}
		uses = append(uses, TextUse{Field: field, What: what, Table: t, Col: c, Compare: compare})
	}
	var walk func(b *Bool)
	walk = func(b *Bool) {
		for _, c := range b.Conds {
			if c.AsNumber {
				use(c.Field, c.Op, c.Col, true)
			}
		}
		for _, k := range b.Kids {
			walk(k)
		}
	}
	if p.Where != nil {
		walk(p.Where)
	}
	for i, m := range p.Measures {
		if (m.Op == "min" || m.Op == "max") && textOrdered(m.Col) {
			use(fmt.Sprintf("measures[%d].column", i), m.Op, *m.Col, false)
		}
	}
	if p.Analysis.SortBy != "" && p.Sort[0].Out < len(p.Groups) {
		if g := p.Groups[p.Sort[0].Out]; g.Bucket == "" && textOrdered(&g.Col) {
			use("sort_by", "sort_by", g.Col, false)
		}
	}
	return uses
}

// CheckTextUses counts the values of each text column in uses that are
// numbers, through run (the table's DuckDB file or its backend), and
// refuses what would be answered wrongly: a comparison with a number on
// a column that holds none, a min, max or sort of a column that holds
// mostly numbers. It returns the notes of the rest: the values a
// comparison could not read as numbers, the numbers a min, max or sort
// ordered as text. Errors: invalid, naming the argument.
func CheckTextUses(ctx context.Context, uses []TextUse, run RunFunc) ([]string, error) {
	counts := map[string]numberCount{}
	var notes []string
	for _, u := range uses {
		if u.Compare && u.Col.allDigits() {
			continue
		}
		key := u.Table.ID + "\x00" + u.Col.Key
		n, ok := counts[key]
		if !ok {
			var err error
			if n, err = countNumbers(ctx, u.Table, u.Col, run); err != nil {
				return nil, err
			}
			counts[key] = n
		}
		judge := u.judgeOrder
		if u.Compare {
			judge = u.judgeCompare
		}
		note, err := judge(n)
		if err != nil {
			return nil, err
		}
		if note != "" && !slices.Contains(notes, note) {
			notes = append(notes, note)
		}
	}
	return notes, nil
}

// allDigits reports whether the load found every value of the column
// digits alone: every value is a number.
func (c *Column) allDigits() bool {
	return c.Digits == DigitsFixed || c.Digits == DigitsVarying || c.Digits == DigitsPlain
}

// numberCount is what a text column holds: its values (cells not
// empty), those that are not numbers, how many of these differ, and the
// first of them in text order.
type numberCount struct {
	values, others, distinct int64
	examples                 []string
}

func (n numberCount) numbers() int64 { return n.values - n.others }

// countNumbers counts column c of t: two small plans, the values and the
// distinct values that are not numbers.
func countNumbers(ctx context.Context, t *Table, c Column, run RunFunc) (numberCount, error) {
	present := Cond{Col: c, Op: "is_null", Null: false}
	all, err := run(ctx, &Plan{Table: t, Conds: []Cond{present}})
	if err != nil {
		return numberCount{}, err
	}
	notNumber := Cond{Col: c, Op: "is_null", Null: true, AsNumber: true}
	distinct := &Plan{Table: t, Conds: []Cond{present, notNumber}, Groups: []Column{c}, Aggs: []Agg{{Name: "count", Op: "count"}}, Limit: MaxHintValues}
	distinct.addOut(c.Key, c.Type, "")
	distinct.addOut("count", typing.TypeInteger, "count")
	others, err := run(ctx, distinct)
	if err != nil {
		return numberCount{}, err
	}
	n := numberCount{values: all.MatchedRowCount, others: others.MatchedRowCount}
	if others.GroupCount != nil {
		n.distinct = *others.GroupCount
	}
	for _, r := range others.Rows {
		if s, ok := r[0].(string); ok {
			n.examples = append(n.examples, s)
		}
	}
	return n, nil
}

// judgeCompare refuses a comparison with a number on a column without
// numbers, and says how many values one with numbers could not read.
func (u TextUse) judgeCompare(n numberCount) (string, error) {
	switch {
	case n.values == 0 || n.others == 0:
		return "", nil
	case n.numbers() == 0:
		return "", qerr(u.Field+".value", "%s with a number compares numbers, and none of the %d values of %q is a number (%s%s); "+
			"compare text with a text value that is not a number, or use eq, in, contains or starts_with; if the column should hold numbers, %s",
			u.What, n.values, u.Col.Key, n.such(), u.Col.found(), ReadAgain)
	}
	return fmt.Sprintf("%s: %q is text, so %s compared its values that are numbers, as numbers; %d of its %d values %s (%s) "+
		"and match no number%s. If those are header or units rows, %s",
		u.Field, u.Col.Key, u.What, n.others, n.values, plural(n.others, "is not a number", "are not numbers"), n.such(), u.Col.found(), ReadAgain), nil
}

// judgeOrder refuses a min, max or sort of a column of mostly numbers,
// which text order would answer wrongly, and says when a few numbers
// among text were ordered as text.
func (u TextUse) judgeOrder(n numberCount) (string, error) {
	what := fmt.Sprintf("%s of %q", u.What, u.Col.Key)
	if u.What == "sort_by" {
		what = fmt.Sprintf("sort_by %q", u.Col.Key)
	}
	switch {
	case n.numbers() == 0:
		return "", nil
	case n.numbers()*2 > n.values:
		return "", qerr(u.Field, "%s would order text, where \"9\" comes after \"10\": %q is text, though %d of its %d values %s; %d %s not (%s%s). "+
			"To make the column numeric, %s", what, u.Col.Key, n.numbers(), n.values, plural(n.numbers(), "is a number", "are numbers"),
			n.others, plural(n.others, "is", "are"), n.such(), u.Col.found(), ReadAgain)
	}
	return fmt.Sprintf("%s is in text order, where \"9\" comes after \"10\": %d of its %d values %s, ordered as text",
		what, n.numbers(), n.values, plural(n.numbers(), "is a number", "are numbers")), nil
}

// such lists the first values that are not numbers.
func (n numberCount) such() string {
	if len(n.examples) == 0 {
		return "none shown"
	}
	q := quoteList(n.examples)
	if n.distinct > int64(len(n.examples)) {
		q += ", ..."
	}
	return q
}

// found is what the import found that made the column text, as a clause
// of a sentence, or "" when its reason says no more than text.
func (c *Column) found() string {
	r := strings.TrimPrefix(c.Reason, "text: ")
	if c.Type != typing.TypeText || r == "" || r == "text" {
		return ""
	}
	return "; the import found " + r
}

// numbersAdvice says, for a text column refused where numbers are
// needed, how it would become numeric; "" for other types.
func (c *Column) numbersAdvice() string {
	if c.Type != typing.TypeText {
		return ""
	}
	return "; if its values are numbers, " + ReadAgain + ", so that the column is numeric"
}
