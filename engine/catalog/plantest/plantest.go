// Package plantest runs the golden plans every dialect is tested against:
// each query in a folder of JSON files, planned against the table in the
// folder's table.json, compiled by a dialect and compared with the golden
// file beside the query; MeasurePlan and FilterPlan, a checked analysis
// of each measure op and each filter op, for the dialects' tests that
// every op of the catalog's table compiles; and OpsComplete, which holds
// a dialect's maps of SQL to the op table.
package plantest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"datadesk/engine/catalog"
)

// Golden plans every query dir/*.json against dir/table.json, compiles it
// with compile, and compares the text with the file beside the query named
// with suffix (".sql.golden"); with update, it writes that file first.
func Golden(t *testing.T, dir, suffix string, update bool, compile func(p *catalog.Plan) (string, error)) {
	t.Helper()
	table, err := readTable(filepath.Join(dir, "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "table.json" {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var q catalog.Query
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&q); err != nil {
				t.Fatal(err)
			}
			p, err := catalog.PlanFor(table, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := compile(p)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(f, ".json") + suffix
			if update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	if n == 0 {
		t.Fatalf("no plans in %s", dir)
	}
}

func readTable(path string) (*catalog.Table, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t catalog.Table
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// OpsComplete fails t for each op of the catalog's op table that a
// dialect has no SQL for, and for each op it has SQL for that the table
// does not hold: measures and filters are the keys of the dialect's maps
// of measure and filter ops. lacks says what a measure op's entry lacks
// of what its row asks ("" for nothing): a window over the groups, an
// aggregate.
func OpsComplete(t *testing.T, dialect string, measures, filters []string, lacks func(o catalog.MeasureOp) string) {
	t.Helper()
	for _, tc := range []struct {
		what        string
		table, have []string
	}{{"measure", catalog.MeasureOps, measures}, {"filter", catalog.FilterOps, filters}} {
		for _, op := range tc.table {
			if !slices.Contains(tc.have, op) {
				t.Errorf("%s op %s has no entry in %s's map of %s ops", tc.what, op, dialect, tc.what)
			}
		}
		for _, op := range tc.have {
			if !slices.Contains(tc.table, op) {
				t.Errorf("%s's map of %s ops has %s, which the op table does not hold", dialect, tc.what, op)
			}
		}
	}
	for _, o := range catalog.MeasureTable {
		if slices.Contains(measures, o.Name) {
			if what := lacks(o); what != "" {
				t.Errorf("measure op %s has no %s in %s's map", o.Name, what, dialect)
			}
		}
	}
}

// opsTable has a column of every kind a measure reads.
var opsTable = &catalog.Table{ID: "t", Columns: []catalog.Column{{Key: "n", Type: "integer"}, {Key: "d", Type: "date"}, {Key: "s", Type: "text"}}}

// MeasurePlan is an analysis of one measure of op, checked: of the
// integer column where it takes a column, with the arguments its row of
// the op table says it takes (p 0.5, order_by the date column, of a
// count over the groups); it is the plan's measure 1.
func MeasurePlan(t testing.TB, op string) *catalog.AnalysisPlan {
	t.Helper()
	i := slices.IndexFunc(catalog.MeasureTable, func(o catalog.MeasureOp) bool { return o.Name == op })
	if i < 0 {
		t.Fatalf("no measure op %s", op)
	}
	row := catalog.MeasureTable[i]
	m := catalog.Measure{Op: op, Name: "x"}
	if row.Column != catalog.NoColumn && row.Column != catalog.MaybeColumn {
		m.Column = "n"
	}
	if slices.Contains(row.Takes, "p") {
		p := 0.5
		m.P = &p
	}
	if slices.Contains(row.Takes, "order_by") {
		m.OrderBy = "d"
	}
	if slices.Contains(row.Takes, "of") {
		m.Of = "c"
	}
	a := catalog.Analysis{FileID: "t", GroupBy: []catalog.GroupBy{{Column: "d", Bucket: "month"}}, Measures: []catalog.Measure{{Op: "count", Name: "c"}, m}}
	p, err := catalog.AnalysisFor(opsTable, nil, a)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return p
}

// FilterPlan is an analysis whose one filter is op, checked: on the text
// column, or the integer one where the op compares, with a value of the
// kind the op takes. The condition is p.Where.Conds[0].
func FilterPlan(t testing.TB, op string) *catalog.AnalysisPlan {
	t.Helper()
	i := slices.IndexFunc(catalog.FilterTable, func(o catalog.FilterOp) bool { return o.Name == op })
	if i < 0 {
		t.Fatalf("no filter op %s", op)
	}
	n := catalog.FilterNode{Column: "n", Op: op}
	switch catalog.FilterTable[i].Value {
	case "value":
		n.Value = json.Number("3")
	case "pair":
		n.Value = []any{json.Number("1"), json.Number("5")}
	case "list":
		n.Value = []any{json.Number("1"), json.Number("2")}
	case "text":
		n.Column, n.Value = "s", "ab"
	case "bool":
		n.Column, n.Value = "s", true
	default:
		t.Fatalf("%s takes a value of kind %q, which FilterPlan does not know", op, catalog.FilterTable[i].Value)
	}
	p, err := catalog.AnalysisFor(opsTable, nil, catalog.Analysis{FileID: "t", Filters: []catalog.FilterNode{n}})
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if p.Where == nil || len(p.Where.Conds) != 1 {
		t.Fatalf("%s: where %+v, want one condition", op, p.Where)
	}
	return p
}
