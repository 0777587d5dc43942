package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestGroupBounds: a grouped plan asked for its Bounds finds its column's
// first and last value as its sorted rows and the analysis's min and max
// do, for every type, with filters or without, and none where nothing
// matched or every value is empty.
func TestGroupBounds(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	header := []string{"code", "name", "qty", "price", "ratio", "day", "at", "ok", "none"}
	cells := [][]string{
		{"10", "pear", "3", "1.50", "0.25", "2024-03-01", "2024-03-01 10:00:00", "true", ""},
		{"9", "apple", "1", "12.00", "-1.5", "2023-12-31", "2024-03-01 09:59:59", "false", ""},
		{"B-1", "", "2", "", "1e3", "", "2025-01-01 00:00:00", "", ""},
		{"007", "Zed", "", "0.05", "", "2024-02-29", "", "true", ""},
		{"", "apple", "2", "3.25", "2.5", "2020-01-01", "2019-06-30 23:00:00", "false", ""},
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "b.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("b", header, cells)}})
	if err != nil {
		t.Fatal(err)
	}
	filters := map[string][]catalog.Filter{
		"none":    nil,
		"qty>=2":  {{Column: "qty", Op: "gte", Value: json.Number("2")}},
		"nothing": {{Column: "qty", Op: "gt", Value: json.Number("100")}},
	}
	for name, fs := range filters {
		for _, col := range header {
			t.Run(name+"/"+col, func(t *testing.T) {
				present := append(append([]catalog.Filter(nil), fs...), catalog.Filter{Column: col, Op: "is_null", Value: false})
				// The first and last of the column's sorted rows, and
				// the analysis's min and max, where it takes the type.
				var wants []string
				var sorted []any
				for _, dir := range []string{"asc", "desc"} {
					r := ask(t, s, catalog.Query{FileID: f.ID, Filters: present, Columns: []string{col}, SortBy: col, Direction: dir, Limit: 1})
					var v any
					if len(r.Rows) > 0 {
						v = r.Rows[0][0]
					}
					sorted = append(sorted, v)
				}
				wants = append(wants, fmt.Sprint(sorted))
				if col != "ok" {
					p, err := s.PlanAnalysis(ctx, catalog.Analysis{FileID: f.ID, Filters: filterNodes(fs),
						Measures: []catalog.Measure{{Op: "min", Column: col, Name: "least"}, {Op: "max", Column: col, Name: "greatest"}}})
					if err != nil {
						t.Fatal(err)
					}
					a, err := s.Analyze(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					wants = append(wants, fmt.Sprint(a.Rows[0]))
				}
				g := askBounds(t, s, f.ID, present, col)
				for _, want := range wants {
					if got := fmt.Sprint([]any{g.First, g.Last}); got != want {
						t.Errorf("bounds %s, want %s (sorted rows, then the analysis's min and max)", got, want)
					}
				}
				if name == "nothing" && (g.First != nil || g.Last != nil) {
					t.Errorf("bounds of no rows: %v %v", g.First, g.Last)
				}
			})
		}
	}
}

// askBounds runs a column's summary's groups on s: the matched rows of
// fileID grouped by col, most frequent first, asked for their Bounds.
func askBounds(t *testing.T, s *Store, fileID string, filters []catalog.Filter, col string) *catalog.QueryResult {
	t.Helper()
	p, err := s.Plan(context.Background(), catalog.Query{FileID: fileID, Filters: filters, GroupBy: []string{col},
		Aggregates: []catalog.Aggregate{{Op: "count", Name: "n"}}, SortBy: "n", Direction: "desc", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	p.Bounds = true
	res, err := s.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// filterNodes are a query's filters as an analysis's.
func filterNodes(fs []catalog.Filter) []catalog.FilterNode {
	var nodes []catalog.FilterNode
	for _, f := range fs {
		nodes = append(nodes, catalog.FilterNode{Column: f.Column, Op: f.Op, Value: f.Value})
	}
	return nodes
}
