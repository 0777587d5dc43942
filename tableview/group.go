package tableview

import (
	"context"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
)

// GroupOps are the measures a grouping offers, each with its words.
var GroupOps = []Op{{"count", "count of rows"}, {"sum", "sum of"}, {"avg", "average of"}, {"min", "smallest"}, {"max", "largest"},
	{"count_distinct", "distinct values of"}}

// GroupBuckets are the time buckets a date or timestamp group takes.
var GroupBuckets = []Op{{"", "each value"}, {"year", "by year"}, {"quarter", "by quarter"}, {"month", "by month"}, {"week", "by week"},
	{"day", "by day"}, {"hour", "by hour"}}

// MeasureName names a grouping's measure in its answer.
const MeasureName = "value"

// Grouped reports whether the view asks for a grouping.
func (v *View) Grouped() bool { return v.Group.Column != "" }

// Analysis is the view's grouping as a files.analyze_table call over the
// view's rows: its conditions, and its search as any text column
// containing it; the largest groups first, or a time bucket's in time
// order.
func (v *View) Analysis(limit int) catalog.Analysis {
	g := v.Group
	a := catalog.Analysis{FileID: v.Table.ID, GroupBy: []catalog.GroupBy{{Column: g.Column, Bucket: g.Bucket}}, Limit: limit, Filters: v.AnalysisFilters()}
	m := catalog.Measure{Op: g.Op, Name: MeasureName}
	if m.Op == "" {
		m.Op = "count"
	}
	if m.Op != "count" {
		m.Column = g.Of
	}
	a.Measures = []catalog.Measure{m}
	a.SortBy, a.Direction = MeasureName, "desc"
	if g.Bucket != "" {
		a.SortBy, a.Direction = "", ""
	}
	return a
}

// AnalysisFilters are the view's conditions and search as an analysis's
// filters: the search, any text column containing it.
func (v *View) AnalysisFilters() []catalog.FilterNode {
	fs, _ := v.Filters()
	var out []catalog.FilterNode
	for _, f := range fs {
		out = append(out, catalog.FilterNode{Column: f.Column, Op: f.Op, Value: f.Value})
	}
	if v.Search != "" {
		var anyOf []catalog.FilterNode
		for _, c := range v.Table.Columns {
			if c.Type == "text" {
				anyOf = append(anyOf, catalog.FilterNode{Column: c.Key, Op: "contains", Value: v.Search})
			}
		}
		if len(anyOf) > 0 {
			out = append(out, catalog.FilterNode{Any: anyOf})
		}
	}
	return out
}

// MeasureWords says a grouping's measure as the analyst chose it: "sum
// of amount", "count of rows".
func MeasureWords(op, of string) string {
	for _, o := range GroupOps {
		if o.Value == op && op != "count" {
			return o.Name + " " + of
		}
	}
	return "count of rows"
}

// Groups answers the view's grouping: its largest limit groups (or its
// first in time order), and how many there are. Errors: the analysis's
// (invalid, naming g, gb, gm or gc).
func (v *View) Groups(ctx context.Context, store *engine.Store, limit int) (*catalog.AnalysisResult, error) {
	p, err := store.PlanAnalysis(ctx, v.Analysis(limit))
	if err != nil {
		return nil, v.groupRefused(err)
	}
	return store.Analyze(ctx, p)
}

// groupRefused says a refused grouping as the address's parameter.
func (v *View) groupRefused(err error) error {
	e := datadesk.AsError(err)
	if e.Code != datadesk.Invalid {
		return err
	}
	p := "g"
	switch {
	case strings.Contains(e.Field, "bucket"):
		p = "gb"
	case strings.HasPrefix(e.Field, "measures") && strings.HasSuffix(e.Field, ".column"):
		p = "gc"
	case strings.HasPrefix(e.Field, "measures"):
		p = "gm"
	case strings.HasPrefix(e.Field, "filters"):
		return err
	}
	return &datadesk.Error{Code: e.Code, Message: p + ": " + e.Message, Field: p, Allowed: e.Allowed, Err: err}
}
