package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// Measures over a whole-number series and top per group, each analysis
// compared with a statement written by hand over the same table.

// loadAnnual stores a table of amounts by region and year (an integer
// column), with years missing in some regions, empty amounts and ties.
func loadAnnual(t *testing.T) (*Store, *catalog.Table) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 53))
	var rows [][]string
	for _, region := range []string{"North", "South", "East", "West"} {
		for year := 1996; year <= 2024; year++ {
			if rng.IntN(5) == 0 {
				continue
			}
			for range 1 + rng.IntN(3) {
				amount := strconv.Itoa(10 * rng.IntN(40))
				if rng.IntN(9) == 0 {
					amount = ""
				}
				rows = append(rows, []string{region, strconv.Itoa(year), amount})
			}
		}
	}
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	f, err := s.AddFile(context.Background(), NewFile{Filename: "annual.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("annual", []string{"region", "year", "amount"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	tb := &f.Tables[0]
	for i, want := range []string{typing.TypeText, typing.TypeInteger, typing.TypeInteger} {
		if tb.Columns[i].Type != want {
			t.Fatalf("column %s typed %s, want %s", tb.Columns[i].Key, tb.Columns[i].Type, want)
		}
	}
	return s, tb
}

// TestAnalysisByHand answers analyses over a year column and top per
// group with the engine and with a statement written by hand, and
// requires the same rows in the same order.
func TestAnalysisByHand(t *testing.T) {
	s, tb := loadAnnual(t)
	from := " FROM data." + ducksql.Ident(tb.ID)
	sum := catalog.Measure{Op: "sum", Column: "amount", Name: "total"}
	of := func(op string) catalog.Measure { return catalog.Measure{Op: op, Of: "total"} }
	cases := []struct {
		name string
		a    catalog.Analysis
		sql  string
	}{
		{"change over the years", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "year"}},
			Measures: []catalog.Measure{sum, of("change"), of("pct_change"), of("running_total")}},
			`SELECT year, s, s - lag(s) OVER w, (s - lag(s) OVER w) / NULLIF(lag(s) OVER w, 0), sum(s) OVER (w ROWS UNBOUNDED PRECEDING)
			FROM (SELECT year, sum(amount) AS s` + from + ` GROUP BY year) WINDOW w AS (ORDER BY year) ORDER BY year`},
		{"each region its series", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "region"}, {Column: "year"}},
			Filters:  []catalog.FilterNode{{Column: "region", Op: "in", Value: []any{"North", "South"}}, {Column: "year", Op: "gte", Value: json.Number("2005")}},
			Measures: []catalog.Measure{sum, of("change"), of("running_total")}},
			`SELECT region, year, s, s - lag(s) OVER w, sum(s) OVER (w ROWS UNBOUNDED PRECEDING)
			FROM (SELECT region, year, sum(amount) AS s` + from + ` WHERE region IN ('North', 'South') AND year >= 2005 GROUP BY region, year)
			WINDOW w AS (PARTITION BY region ORDER BY year) ORDER BY region, year`},
		{"a running total carried into the years shown", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "year"}}, Windows: catalog.WindowsAll,
			Filters:  []catalog.FilterNode{{Column: "year", Op: "gte", Value: json.Number("2015")}, {Column: "region", Op: "ne", Value: "East"}},
			Measures: []catalog.Measure{sum, of("running_total"), of("pct_change")}},
			`SELECT * FROM (SELECT year, s, sum(s) OVER (w ROWS UNBOUNDED PRECEDING), (s - lag(s) OVER w) / NULLIF(lag(s) OVER w, 0)
			FROM (SELECT year, sum(amount) AS s` + from + ` WHERE region <> 'East' GROUP BY year) WINDOW w AS (ORDER BY year)) WHERE year >= 2015 ORDER BY year`},
		{"the top two years of each region, by rank", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "region"}, {Column: "year"}},
			Measures: []catalog.Measure{sum}, Top: &catalog.Top{N: 2, Per: []string{"region"}, By: "total"}},
			`SELECT region, year, s FROM (SELECT region, year, sum(amount) AS s, rank() OVER (PARTITION BY region ORDER BY sum(amount) DESC NULLS LAST) AS r` +
				from + ` GROUP BY region, year) WHERE r <= 2 ORDER BY region, s DESC NULLS LAST, year`},
		{"the lowest three, ties cut", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "region"}, {Column: "year"}},
			Measures: []catalog.Measure{sum}, Top: &catalog.Top{N: 3, Per: []string{"region"}, By: "total", Direction: "asc", Ties: "cut"}},
			`SELECT region, year, s FROM (SELECT region, year, sum(amount) AS s, row_number() OVER (PARTITION BY region ORDER BY sum(amount) NULLS LAST, year) AS r` +
				from + ` GROUP BY region, year) WHERE r <= 3 ORDER BY region, s NULLS LAST, year`},
		{"the top year of each region by its change", catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "region"}, {Column: "year"}},
			Measures: []catalog.Measure{sum, {Op: "change", Of: "total", Name: "up"}}, Top: &catalog.Top{N: 1, Per: []string{"region"}, By: "up"}},
			`SELECT region, year, s, up FROM (SELECT *, rank() OVER (PARTITION BY region ORDER BY up DESC NULLS LAST) AS r FROM (
			SELECT region, year, s, s - lag(s) OVER (PARTITION BY region ORDER BY year) AS up FROM (SELECT region, year, sum(amount) AS s` + from +
				` GROUP BY region, year))) WHERE r <= 1 ORDER BY region, up DESC NULLS LAST, year`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.a.FileID, c.a.Limit = tb.ID, catalog.MaxAnalysisPage
			p, err := s.PlanAnalysis(context.Background(), c.a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Analyze(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			want := byHand(t, s, c.sql, len(p.OutNames()))
			if len(want) == 0 || len(want) > catalog.MaxAnalysisPage {
				t.Fatalf("the statement by hand gave %d rows; the case needs from 1 to %d", len(want), catalog.MaxAnalysisPage)
			}
			if len(got.Rows) != len(want) {
				t.Fatalf("got %d rows, want %d\nsql %s", len(got.Rows), len(want), got.SQL)
			}
			for i := range want {
				for j := range want[i] {
					if !sameAnalysisValue(got.Rows[i][j], want[i][j]) {
						t.Fatalf("row %d %s: got %v, want %v\nsql %s", i, p.OutNames()[j], got.Rows[i], want[i], got.SQL)
					}
				}
			}
		})
	}
}

// byHand runs a statement of width columns on s.
func byHand(t *testing.T, s *Store, q string, width int) [][]any {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, width)
		ptrs := make([]any, width)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				vals[i] = s
			} else if v != nil {
				vals[i] = numberOf(v)
			}
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// numberOf is a value of the statement by hand as the oracle compares
// numbers.
func numberOf(v any) any {
	if f, ok := numOf(v); ok {
		return f
	}
	return fmt.Sprint(v)
}
