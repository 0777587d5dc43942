package catalog

import "datadesk/engine/typing"

// AnalysisPlan is a checked analysis in typed parts, with no SQL in it.
type AnalysisPlan struct {
	Table    *Table
	Analysis Analysis
	// Outputs are the result's columns: groups, then measures.
	Outputs
	// Lookup, if set, is the joined table; its columns used are named
	// with LookupPrefix in Conds and groups.
	Lookup *LookupPlan
	Where  *Bool
	Groups []GroupTerm
	// Measures are in the call's order; their output follows the groups.
	Measures []MeasureTerm
	Having   []HavingCond
	Top      *TopTerm
	// Sort is the result's order, complete (every group column is in it).
	Sort []SortTerm
	// Series is the index of the group that change, pct_change and
	// running_total follow (seriesOf): a time bucket, or a whole-number
	// column; -1 if none.
	Series int
	// SeriesWhere, with Analysis.Windows "all", are the filters on the
	// series column, held back from the rows and applied to the buckets
	// after the measures over the groups ran over every bucket.
	SeriesWhere []Cond
	Limit       int
	Offset      int
}

// LookupPlan is a checked lookup: the table, its key pairs, and its
// columns the analysis reads.
type LookupPlan struct {
	Table *Table
	On    []JoinKey
	Cols  []Column
}

// JoinKey pairs a column of the table with one of the lookup table.
type JoinKey struct {
	Col, Lookup Column
}

// Bool is conditions and groups of them, all of which hold (or, with Or,
// any of which).
type Bool struct {
	Or    bool
	Conds []Cond
	Kids  []*Bool
}

// GroupTerm is a checked group: a column, bucketed or not, and the name
// of its output column.
type GroupTerm struct {
	Col    Column
	Bucket string
	Name   string
}

// Type is the catalog type of the group's values.
func (g GroupTerm) Type() string {
	switch {
	case g.Bucket == "hour":
		return typing.TypeTimestamp
	case g.Bucket != "":
		return typing.TypeDate
	}
	return g.Col.Type
}

// MeasureTerm is a checked measure.
type MeasureTerm struct {
	Name string
	// Op is an op of MeasureTable, or expr.
	Op  string
	Col *Column
	P   float64
	// Expr is an expr measure's computation.
	Expr *Expr
	// Of is the measure a measure over the groups follows.
	Of int
	// Within are the groups rank ranks within.
	Within []int
	Desc   bool
	// OrderBy is the column first and last follow.
	OrderBy *Column
	// Type is the catalog type of its values.
	Type string
}

// Window reports whether the measure is computed over the groups.
func (m MeasureTerm) Window() bool {
	op, _ := measureOp(m.Op)
	return op.OverGroups
}

// OfTotal reports whether the measure is a part of the total of every
// group's value (a share).
func (m MeasureTerm) OfTotal() bool {
	op, _ := measureOp(m.Op)
	return op.OfTotal
}

// HavingCond is a checked condition on measure Measure.
type HavingCond struct {
	Measure int
	Op      string
	Values  []any
	Null    bool
}

// TopTerm keeps the first N groups of each combination of groups Per, by
// measure By.
type TopTerm struct {
	N    int
	Per  []int
	By   int
	Desc bool
	// Cut keeps n groups exactly; otherwise every group tied with the
	// n-th is kept too.
	Cut bool
}

// SortTerm orders by output column Out.
type SortTerm struct {
	Out  int
	Desc bool
}

// Grouped reports whether the result has one row per group.
func (p *AnalysisPlan) Grouped() bool { return len(p.Groups) > 0 }

// ExprLevels orders the computed measures in levels: each reads only
// measures of the levels before it, so each level can be one stage of a
// statement.
func (p *AnalysisPlan) ExprLevels() [][]int {
	level := map[int]int{}
	var depth func(i int) int
	depth = func(i int) int {
		if d, ok := level[i]; ok {
			return d
		}
		d := 0
		for _, r := range p.Measures[i].Expr.Refs() {
			if p.Measures[r].Op == "expr" {
				d = max(d, depth(r)+1)
			}
		}
		level[i] = d
		return d
	}
	var out [][]int
	for i, m := range p.Measures {
		if m.Op != "expr" {
			continue
		}
		d := depth(i)
		for len(out) <= d {
			out = append(out, nil)
		}
		out[d] = append(out[d], i)
	}
	return out
}

// WindowsAll reports whether the measures over the groups ran over
// every bucket, with filters on the series column held back.
func (p *AnalysisPlan) WindowsAll() bool { return len(p.SeriesWhere) > 0 }

// MaxAnalysisExport bounds the groups an analysis hands an export (the
// page's grouping as XLSX) in its one pass; MaxAnalysisPage bounds those
// of an answer a model reads.
const MaxAnalysisExport = 10_000

// ForExport is the plan answering its first n groups (at most
// MaxAnalysisExport) in one pass, for an export.
func (p *AnalysisPlan) ForExport(n int) *AnalysisPlan {
	q := *p
	q.Limit, q.Offset = min(max(n, 1), MaxAnalysisExport), 0
	return &q
}
