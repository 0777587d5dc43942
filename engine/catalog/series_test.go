package catalog

import "testing"

// TestSeriesOfWholeNumbers: change, pct_change and running_total follow
// a whole-number group (a year) when no group is a time bucket, the last
// such group when there are several; a bucket still comes first.
func TestSeriesOfWholeNumbers(t *testing.T) {
	t.Parallel()
	sum := Measure{Op: "sum", Column: "amount"}
	cases := []struct {
		name   string
		groups []GroupBy
		want   int
	}{
		{"year alone", []GroupBy{{Column: "qty"}}, 0},
		{"each region a series", []GroupBy{{Column: "region"}, {Column: "qty"}}, 1},
		{"a bucket first", []GroupBy{{Column: "qty"}, {Column: "day", Bucket: "month"}}, 1},
		{"the last whole number", []GroupBy{{Column: "qty"}, {Column: "region"}, {Column: "lookup.pop"}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, op := range []string{"change", "pct_change", "running_total"} {
				a := Analysis{FileID: "t1", GroupBy: c.groups, Measures: []Measure{sum, {Op: op, Of: "sum_amount"}}}
				if c.groups[len(c.groups)-1].Column == "lookup.pop" {
					a.Lookup = &Lookup{FileID: "t2", On: []LookupJoin{{Column: "region", LookupColumn: "region"}}}
				}
				p, err := AnalysisFor(ordersTable, populationTable, a)
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				if p.Series != c.want {
					t.Errorf("%s: series %d, want %d", op, p.Series, c.want)
				}
			}
		})
	}
	// windows: all holds back the filters on the whole-number column.
	p, err := AnalysisFor(ordersTable, nil, Analysis{FileID: "t1", GroupBy: []GroupBy{{Column: "qty"}}, Windows: WindowsAll,
		Filters:  []FilterNode{{Column: "qty", Op: "gte", Value: num("2015")}, {Column: "region", Op: "eq", Value: "north"}},
		Measures: []Measure{sum, {Op: "running_total", Of: "sum_amount"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SeriesWhere) != 1 || p.SeriesWhere[0].Col.Key != "qty" || len(p.Where.Conds) != 1 {
		t.Errorf("held back %+v, kept %+v; want the filter on qty held back", p.SeriesWhere, p.Where)
	}
	if n := windowsNote(p); n != "running_sum_amount ran over every value of qty the other filters kept (windows: all); "+
		"the filters on qty then chose the values shown" {
		t.Errorf("note %q", n)
	}
}

var populationTable = &Table{ID: "t2", Columns: []Column{{Key: "region", Type: "text"}, {Key: "pop", Type: "integer"}}}
