package catalog_test

import (
	"regexp"
	"slices"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestEveryMeasureOpChecks: each op MeasureOps lists is checked by the
// plan, and an op it does not list is refused with the list.
func TestEveryMeasureOpChecks(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		if p := plantest.MeasurePlan(t, op); p.Measures[1].Op != op {
			t.Errorf("%s planned as %s", op, p.Measures[1].Op)
		}
	}
	_, err := catalog.AnalysisFor(&catalog.Table{ID: "t", Columns: []catalog.Column{{Key: "n", Type: "integer"}}}, nil,
		catalog.Analysis{FileID: "t", Measures: []catalog.Measure{{Op: "no_such_op", Column: "n"}}})
	if e := datadesk.AsError(err); e == nil || !slices.Equal(e.Allowed, catalog.MeasureOps) {
		t.Errorf("an unknown op: %v, want MeasureOps as allowed", err)
	}
}

// TestOpTableComplete: every row of the op table says all the rest of
// the server reads from it: a measure op the type of its values, its
// default name (whose parts are arguments it takes) and its Doc; a filter
// op the kind of its value and its Doc. Each dialect's test holds its map
// of SQL to the same table (plantest.OpsComplete).
func TestOpTableComplete(t *testing.T) {
	part := regexp.MustCompile(`\{[^}]*\}`)
	seen := map[string]bool{}
	for _, o := range catalog.MeasureTable {
		if seen[o.Name] {
			t.Errorf("measure op %s: two rows", o.Name)
		}
		seen[o.Name] = true
		if o.Gives < catalog.GivesInteger || o.Gives > catalog.GivesOfType {
			t.Errorf("measure op %s: no type of its values (Gives)", o.Name)
		}
		if o.Doc == "" {
			t.Errorf("measure op %s: no Doc", o.Name)
		}
		if o.Named == "" {
			t.Errorf("measure op %s: no default name (Named)", o.Name)
		}
		for _, p := range part.FindAllString(o.Named, -1) {
			ok := map[string]bool{"{_column}": o.Column != catalog.NoColumn, "{of}": slices.Contains(o.Takes, "of"), "{p}": slices.Contains(o.Takes, "p")}[p]
			if !ok {
				t.Errorf("measure op %s: its name %q has %s, which it does not take", o.Name, o.Named, p)
			}
		}
	}
	for _, o := range catalog.FilterTable {
		if seen["filter "+o.Name] {
			t.Errorf("filter op %s: two rows", o.Name)
		}
		seen["filter "+o.Name] = true
		if !slices.Contains([]string{"value", "pair", "list", "text", "bool"}, o.Value) {
			t.Errorf("filter op %s: value %q is none of value, pair, list, text, bool", o.Name, o.Value)
		}
		if o.Doc == "" {
			t.Errorf("filter op %s: no Doc", o.Name)
		}
	}
}

// TestMeasureTypesAndNames: the op table's Gives and Named, as a plan
// reads them.
func TestMeasureTypesAndNames(t *testing.T) {
	table := &catalog.Table{ID: "t", Columns: []catalog.Column{{Key: "n", Type: "integer"}, {Key: "amount", Type: "decimal"},
		{Key: "day", Type: "date"}, {Key: "city", Type: "text"}}}
	p90 := 0.9
	for _, tc := range []struct {
		m          catalog.Measure
		name, typ  string
		groupByDay bool
	}{
		{catalog.Measure{Op: "count"}, "count", "integer", false},
		{catalog.Measure{Op: "count", Column: "city"}, "count_city", "integer", false},
		{catalog.Measure{Op: "count_distinct", Column: "city"}, "distinct_city", "integer", false},
		{catalog.Measure{Op: "sum", Column: "amount"}, "sum_amount", "decimal", false},
		{catalog.Measure{Op: "sum", Column: "n"}, "sum_n", "integer", false},
		{catalog.Measure{Op: "avg", Column: "n"}, "avg_n", "double", false},
		{catalog.Measure{Op: "min", Column: "day"}, "min_day", "date", false},
		{catalog.Measure{Op: "last", Column: "city", OrderBy: "day"}, "last_city", "text", false},
		{catalog.Measure{Op: "percentile", Column: "amount", P: &p90}, "p90_amount", "double", false},
		{catalog.Measure{Op: "share"}, "share", "double", false},
		{catalog.Measure{Op: "mode", Column: "amount"}, "mode_amount", "decimal", false},
		{catalog.Measure{Op: "mode", Column: "city"}, "mode_city", "text", false},
		{catalog.Measure{Op: "running_total", Of: "sum_amount"}, "running_sum_amount", "decimal", true},
		{catalog.Measure{Op: "change", Of: "avg_n"}, "change_avg_n", "double", true},
		{catalog.Measure{Op: "pct_change", Of: "sum_amount"}, "pct_change_sum_amount", "double", true},
		{catalog.Measure{Op: "rank", Of: "sum_amount"}, "rank_sum_amount", "integer", true},
	} {
		a := catalog.Analysis{FileID: "t", Measures: []catalog.Measure{tc.m}}
		if tc.groupByDay {
			a.GroupBy = []catalog.GroupBy{{Column: "day", Bucket: "month"}}
			a.Measures = []catalog.Measure{{Op: "sum", Column: "amount"}, {Op: "avg", Column: "n"}, tc.m}
		}
		p, err := catalog.AnalysisFor(table, nil, a)
		if err != nil {
			t.Fatalf("%s: %v", tc.m.Op, err)
		}
		last := len(p.Measures) - 1
		if got := p.Measures[last]; got.Name != tc.name || got.Type != tc.typ {
			t.Errorf("%s: got %s %s, want %s %s", tc.m.Op, got.Name, got.Type, tc.name, tc.typ)
		}
	}
}
