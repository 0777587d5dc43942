package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"datadesk"
)

var countriesTable = &Table{ID: "t2", Columns: []Column{
	{Key: "region", Type: "text"},
	{Key: "continent", Type: "text"},
}}

func num(s string) json.Number { return json.Number(s) }

// TestAnalysisRefusals: each clause refuses what it cannot run with an
// invalid error naming the argument, and saying what is wrong in words.
func TestAnalysisRefusals(t *testing.T) {
	count := Measure{Op: "count"}
	byRegion := []GroupBy{{Column: "region"}}
	cases := []struct {
		name  string
		a     Analysis
		field string
		says  string
	}{
		{"limit too large", Analysis{Limit: MaxAnalysisPage + 1}, "limit", "from 1 to 50"},
		{"negative offset", Analysis{Offset: -1}, "offset", "offset must be from 0"},
		{"unknown filter column", Analysis{Filters: []FilterNode{{Column: "regoin", Op: "eq", Value: "x"}}}, "filters[0].column", "regoin"},
		{"unknown filter op", Analysis{Filters: []FilterNode{{Column: "region", Op: "like", Value: "x"}}}, "filters[0].op", "like"},
		{"filter value of the wrong type", Analysis{Filters: []FilterNode{{Column: "qty", Op: "gt", Value: "many"}}}, "filters[0].value", "qty"},
		{"nested filter checked", Analysis{Filters: []FilterNode{{Any: []FilterNode{{Column: "region", Op: "eq", Value: "x"}, {Column: "nope", Op: "eq", Value: "y"}}}}}, "filters[0].any[1].column", "nope"},
		{"bucket of a text column", Analysis{GroupBy: []GroupBy{{Column: "region", Bucket: "month"}}}, "group_by[0].bucket", "region"},
		{"unknown bucket", Analysis{GroupBy: []GroupBy{{Column: "day", Bucket: "fortnight"}}}, "group_by[0].bucket", "fortnight"},
		{"too many groups", Analysis{GroupBy: []GroupBy{{Column: "day"}, {Column: "region"}, {Column: "amount"}, {Column: "qty"}, {Column: "day", Bucket: "year"}}}, "group_by", "4"},
		{"sum of text", Analysis{GroupBy: byRegion, Measures: []Measure{{Op: "sum", Column: "region"}}}, "measures[0].column", "region"},
		{"unknown measure op", Analysis{Measures: []Measure{{Op: "no_such_op", Column: "amount"}}}, "measures[0].op", "no_such_op"},
		{"percentile without p", Analysis{Measures: []Measure{{Op: "percentile", Column: "amount"}}}, "measures[0].p", "p"},
		{"expression naming nothing", Analysis{Measures: []Measure{count, {Name: "share", Expr: "count/total"}}}, "measures[1].expr", "total"},
		{"duplicate names", Analysis{Measures: []Measure{{Op: "count", Name: "n"}, {Op: "sum", Column: "qty", Name: "n"}}}, "measures[1].name", "n"},
		{"first without order", Analysis{GroupBy: byRegion, Measures: []Measure{{Op: "first", Column: "amount"}}}, "measures[0].order_by", "order_by"},
		{"running total without a time bucket", Analysis{GroupBy: byRegion, Measures: []Measure{count, {Op: "running_total", Of: "count"}}}, "measures[1].op", "bucket"},
		{"change of text", Analysis{GroupBy: []GroupBy{{Column: "day", Bucket: "month"}}, Measures: []Measure{{Op: "max", Column: "region", Name: "r"}, {Op: "change", Of: "r"}}}, "measures[1].of", "number"},
		{"windows unknown", Analysis{Windows: "some", GroupBy: []GroupBy{{Column: "day", Bucket: "month"}}, Measures: []Measure{count}}, "windows", "filtered"},
		{"having an unknown measure", Analysis{GroupBy: byRegion, Measures: []Measure{count}, Having: []Having{{Measure: "total", Op: "gt", Value: num("1")}}}, "having[0].measure", "total"},
		{"top per an ungrouped column", Analysis{GroupBy: byRegion, Measures: []Measure{count}, Top: &Top{N: 3, Per: []string{"day"}}}, "top.per", "group columns"},
		{"top past its bound", Analysis{GroupBy: byRegion, Measures: []Measure{count}, Top: &Top{N: MaxTopN + 1}}, "top.n", "100"},
		{"unknown ties", Analysis{GroupBy: []GroupBy{{Column: "day"}, {Column: "region"}}, Measures: []Measure{count}, Top: &Top{N: 3, Per: []string{"day"}, Ties: "some"}}, "top.ties", "keep"},
		{"sort by an unknown output", Analysis{GroupBy: byRegion, Measures: []Measure{count}, SortBy: "amount"}, "sort_by", "amount"},
		{"unknown direction", Analysis{Direction: "up"}, "direction", "asc"},
		{"lookup column unknown", Analysis{Lookup: &Lookup{FileID: "t2", On: []LookupJoin{{Column: "region", LookupColumn: "name"}}}}, "lookup.on[0].lookup_column", "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.a.FileID = "t1"
			var lt *Table
			if c.a.Lookup != nil {
				lt = countriesTable
			}
			_, err := AnalysisFor(ordersTable, lt, c.a)
			if err == nil {
				t.Fatal("accepted")
			}
			e := datadesk.AsError(err)
			if e.Code != datadesk.Invalid {
				t.Errorf("code %s, want invalid: %v", e.Code, err)
			}
			if e.Field != c.field {
				t.Errorf("field %q, want %q: %v", e.Field, c.field, err)
			}
			if !strings.Contains(e.Message, c.says) {
				t.Errorf("message %q does not say %q", e.Message, c.says)
			}
		})
	}
}

// TestAnalysisPlans: what each clause puts in the plan.
func TestAnalysisPlans(t *testing.T) {
	p, err := AnalysisFor(ordersTable, countriesTable, Analysis{
		FileID:   "t1",
		Filters:  []FilterNode{{Column: "amount", Op: "gte", Value: num("100")}, {Any: []FilterNode{{Column: "region", Op: "eq", Value: "north"}, {Column: "lookup.continent", Op: "eq", Value: "Europe"}}}},
		GroupBy:  []GroupBy{{Column: "day", Bucket: "month"}, {Column: "lookup.continent"}},
		Measures: []Measure{{Op: "count"}, {Op: "sum", Column: "amount", Name: "total"}, {Name: "avg_order", Expr: "total/count"}, {Op: "running_total", Of: "total"}},
		Having:   []Having{{Measure: "count", Op: "gt", Value: num("2")}},
		Top:      &Top{N: 2, Per: []string{"day_month"}, By: "total"},
		Lookup:   &Lookup{FileID: "t2", On: []LookupJoin{{Column: "region", LookupColumn: "region"}}},
		SortBy:   "total", Direction: "desc",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.OutNames(), ","); got != "day_month,lookup_continent,count,total,avg_order,running_total" {
		t.Errorf("outputs %s", got)
	}
	if p.Where == nil || len(p.Where.Conds) != 1 || len(p.Where.Kids) != 1 || !p.Where.Kids[0].Or {
		t.Errorf("filter tree %+v, want one condition and one any-group", p.Where)
	}
	if p.Series != 0 {
		t.Errorf("series %d, want the month bucket, group 0", p.Series)
	}
	if p.Lookup == nil || len(p.Lookup.Cols) != 1 || p.Lookup.Cols[0].Key != "continent" {
		t.Errorf("lookup %+v, want the one column read: continent", p.Lookup)
	}
	if p.Top == nil || p.Top.N != 2 || len(p.Having) != 1 || p.Limit != DefaultAnalysisPage {
		t.Errorf("top %+v, having %v, limit %d", p.Top, p.Having, p.Limit)
	}
	if len(p.Sort) == 0 || p.Sort[0].Desc != true {
		t.Errorf("sort %+v, want total descending first", p.Sort)
	}
	if levels := p.ExprLevels(); len(levels) != 1 || len(levels[0]) != 1 {
		t.Errorf("computed levels %v, want one measure at one level", levels)
	}
	if !p.Measures[3].Window() || p.Measures[1].Window() {
		t.Error("running_total is a measure over the groups, sum is not")
	}
}
