package catalog

import (
	"fmt"
	"strings"
	"testing"

	"datadesk"
)

// TestQueryRefusals: files.query_table's checks each name the argument.
func TestQueryRefusals(t *testing.T) {
	cases := []struct {
		name  string
		q     Query
		field string
		says  string
	}{
		{"limit", Query{Limit: MaxQueryRows + 1}, "limit", "limit must be from 0"},
		{"schema offset", Query{SchemaOffset: 256}, "schema_offset", "255"},
		{"columns with groups", Query{GroupBy: []string{"region"}, Columns: []string{"qty"}}, "columns", "group_by"},
		{"unknown column", Query{Columns: []string{"price"}}, "columns[0]", "valid keys: day, region, amount, qty"},
		{"grouped twice", Query{GroupBy: []string{"region", "region"}}, "group_by[1]", "twice"},
		{"sum of text", Query{GroupBy: []string{"region"}, Aggregates: []Aggregate{{Op: "sum", Column: "region"}}}, "aggregates[0].column", "numeric"},
		{"unknown aggregate", Query{Aggregates: []Aggregate{{Op: "median", Column: "qty"}}}, "aggregates[0].op", "files.analyze_table"},
		{"names clash", Query{GroupBy: []string{"region"}, Aggregates: []Aggregate{{Op: "count", Name: "region"}}}, "aggregates[0].name", "already used"},
		{"sort by nothing", Query{GroupBy: []string{"region"}, SortBy: "qty"}, "sort_by", "neither"},
		{"direction", Query{Direction: "sideways"}, "direction", "asc or desc"},
		{"filter op", Query{Filters: []Filter{{Column: "qty", Op: "like", Value: 1}}}, "filters[0].op", "like"},
		{"filter value", Query{Filters: []Filter{{Column: "day", Op: "gt", Value: "last tuesday"}}}, "filters[0].value", "day"},
		{"too many filters", Query{Filters: make([]Filter, MaxFilters+1)}, "filters", fmt.Sprint(MaxFilters)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.q.FileID = "t1"
			_, err := PlanFor(ordersTable, c.q)
			e := datadesk.AsError(err)
			if err == nil || e.Code != datadesk.Invalid || e.Field != c.field || !strings.Contains(e.Message, c.says) {
				t.Errorf("got %v (field %q), want invalid on %q saying %q", err, e.Field, c.field, c.says)
			}
		})
	}
}

// TestFilterValues: a filter's value becomes its column's type (numbers
// as float64, dates as YYYY-MM-DD), so the dialects bind typed values and
// never compare text with numbers.
func TestFilterValues(t *testing.T) {
	cases := []struct {
		col   string
		op    string
		value any
		want  string
	}{
		{"qty", "eq", num("3"), `float64(3) "" false`},
		{"qty", "in", []any{num("1"), "2"}, `float64(1) float64(2) "" false`},
		{"amount", "gte", "12.5", `float64(12.5) "" false`},
		{"day", "lt", "2024-02-01", `string(2024-02-01) "" false`},
		{"region", "contains", "north", ` "north" false`},
		{"region", "is_null", true, ` "" true`},
	}
	for _, c := range cases {
		t.Run(c.col+" "+c.op, func(t *testing.T) {
			conds, _, err := CheckFilters(ordersTable, []Filter{{Column: c.col, Op: c.op, Value: c.value}}, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(conds) != 1 || conds[0].Col.Key != c.col || conds[0].Op != c.op {
				t.Fatalf("conds %+v", conds)
			}
			var vals []string
			for _, v := range conds[0].Values {
				vals = append(vals, fmt.Sprintf("%T(%v)", v, v))
			}
			got := fmt.Sprintf("%s %q %v", strings.Join(vals, " "), conds[0].Text, conds[0].Null)
			if got != c.want {
				t.Errorf("value %v, want %s", got, c.want)
			}
		})
	}
}

// TestPlanOutputs: a grouped plan's outputs are its groups then its
// aggregates, with default names and their types.
func TestPlanOutputs(t *testing.T) {
	p, err := PlanFor(ordersTable, Query{FileID: "t1", GroupBy: []string{"region"},
		Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "qty"}, {Op: "avg", Column: "amount", Name: "mean"}}, SortBy: "mean", Direction: "desc"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.OutNames(), ","); got != "region,count,sum_qty,mean" {
		t.Errorf("outputs %s", got)
	}
	var types []string
	for i := range p.OutNames() {
		types = append(types, p.OutType(i))
	}
	if got := strings.Join(types, ","); got != "text,integer,integer,double" {
		t.Errorf("types %s", got)
	}
	if !p.Grouped() || !p.Derived() || p.Filtered() {
		t.Errorf("grouped %v derived %v filtered %v", p.Grouped(), p.Derived(), p.Filtered())
	}
}

// TestExpressions: computed measures' grammar, with what it refuses said
// where it stops.
func TestExpressions(t *testing.T) {
	names := map[string]int{"sales": 0, "cost": 1}
	ref := func(name string) (int, error) {
		if i, ok := names[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("no measure is named %q", name)
	}
	good := map[string][]int{
		"sales - cost":           {0, 1},
		"(sales-cost)/sales*100": {0, 1, 0},
		"-cost + 2.5e3":          {1},
		"100":                    nil,
	}
	for src, refs := range good {
		e, err := ParseExpr("measures[2].expr", src, ref)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if fmt.Sprint(e.Refs()) != fmt.Sprint(refs) && len(refs) > 0 {
			t.Errorf("%q refers to %v, want %v", src, e.Refs(), refs)
		}
	}
	bad := map[string]string{
		"sales +":                 "",
		"sales ^ 2":               "^",
		"(sales":                  ")",
		"profit":                  "profit",
		strings.Repeat("1+", 200): "characters",
	}
	for src, says := range bad {
		_, err := ParseExpr("measures[2].expr", src, ref)
		e := datadesk.AsError(err)
		if err == nil || e.Field != "measures[2].expr" || !strings.Contains(e.Message, says) {
			t.Errorf("%q: %v, want refused on measures[2].expr saying %q", src, err, says)
		}
	}
}
