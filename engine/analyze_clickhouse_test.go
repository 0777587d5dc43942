package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestClickHouseAnalysisEquivalence loads the oracle's tables into DuckDB
// and, moved, into a two-shard ClickHouse cluster, and asks both the same
// random analyses, every one the oracle asks (measures over the groups,
// windows all, ties kept, first and last among them): the answers are
// the same.
func TestClickHouseAnalysisEquivalence(t *testing.T) {
	ch := testClickHouse(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(25, 6))
	_, cells := genAnalysisRows(1500, rng)
	s := acquire(t, newClusterEngine(t, ch, 0), datadesk.NewID("u"))
	local, localLookup := loadAnalysisTables(t, s, cells)
	remote, remoteLookup := loadAnalysisTables(t, s, cells)
	for _, f := range []*catalog.File{remote, remoteLookup} {
		if _, err := s.MoveTable(ctx, f.Tables[0].ID, catalog.LocationClickHouse); err != nil {
			t.Fatal(err)
		}
	}
	g := &anaGen{rng: rng}
	covered := map[string]int{}
	analyses := make([]catalog.Analysis, 0, 420)
	for range 360 {
		analyses = append(analyses, g.analysis())
	}
	// Every bucket of both time columns, asked for certain.
	for _, col := range []string{"day", "ts"} {
		for _, b := range catalog.Buckets {
			if col == "day" && b == "hour" {
				continue
			}
			analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: col, Bucket: b}, {Column: "country"}},
				Measures: []catalog.Measure{{Op: "count"}, {Op: "sum", Column: "cases"}, {Op: "median", Column: "price"}, {Op: "share", Column: "cases"}},
				Limit:    catalog.MaxAnalysisPage})
		}
	}
	// Ties at top's cut, certain: most cities have rows of both flags.
	for _, ties := range []string{"", "keep", "cut"} {
		for n := 1; n <= 3; n++ {
			analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "country"}, {Column: "city"}},
				Measures: []catalog.Measure{{Op: "count_distinct", Column: "flag", Name: "flags"}, {Op: "last", Column: "cases", OrderBy: "ts"}},
				Top:      &catalog.Top{N: n, Per: []string{"country"}, By: "flags", Ties: ties}, Limit: catalog.MaxAnalysisPage})
		}
	}
	// Measures over the groups of decimals and doubles, over each series
	// of cities and over all buckets, and ties kept of decimal sums.
	for _, of := range []catalog.Measure{{Op: "sum", Column: "price"}, {Op: "min", Column: "price"}, {Op: "avg", Column: "cases"}} {
		of.Name = "x"
		for _, op := range []string{"change", "pct_change", "running_total", "rank"} {
			for _, windows := range []string{"", catalog.WindowsAll} {
				analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "city"}, {Column: "day", Bucket: "month"}},
					Filters:  []catalog.FilterNode{{Column: "day", Op: "gte", Value: "2023-06-01"}},
					Measures: []catalog.Measure{of, {Op: op, Of: "x", Name: "w"}}, Windows: windows, SortBy: "w", Limit: catalog.MaxAnalysisPage})
			}
		}
		analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "country"}, {Column: "flag"}},
			Measures: []catalog.Measure{of}, Top: &catalog.Top{N: 1, Per: []string{"country"}, By: "x"}, Limit: catalog.MaxAnalysisPage})
	}
	for n, a := range analyses {
		run := func(file, lookup string) (*catalog.AnalysisResult, error) {
			a.FileID = file
			if a.Lookup != nil {
				a.Lookup.FileID = lookup
			}
			p, err := s.PlanAnalysis(ctx, a)
			if err != nil {
				t.Fatalf("analysis %d: plan: %v", n, err)
			}
			return s.Analyze(ctx, p)
		}
		want, err := run(local.ID, localLookup.ID)
		if err != nil {
			t.Fatalf("analysis %d on duckdb: %v", n, err)
		}
		got, err := run(remote.ID, remoteLookup.ID)
		aj, _ := json.Marshal(a)
		if err != nil {
			t.Fatalf("analysis %d %s on clickhouse: %v", n, aj, err)
		}
		if diff := sameAnalysis(want, got); diff != "" {
			t.Errorf("analysis %d %s\nclickhouse %s\n%s", n, aj, got.SQL, diff)
			if t.Failed() && n > 0 && covered["answered"] < n/2 {
				return
			}
		}
		covered["answered"]++
		for k := range capabilities(a) {
			covered[k]++
		}
		if a.Top != nil && a.Top.Ties != "cut" && want.Tied > 0 {
			covered["ties kept"]++
		}
	}
	// Every op and bucket of the catalog's table, ties kept and cut, and
	// the measures over the groups over the filtered groups and over all.
	want := []string{"filter group", "nested filter group", "expr", "having", "top", "lookup", "sort_by", "offset",
		"ties cut", "ties kept", "windows all", "windows filtered"}
	want = append(want, catalog.MeasureOps...)
	want = append(want, catalog.FilterOps...)
	for _, b := range catalog.Buckets {
		want = append(want, "bucket "+b)
	}
	for _, k := range want {
		if covered[k] < 5 {
			t.Errorf("%s: answered %d times, want at least 5", k, covered[k])
		}
	}
	t.Logf("coverage: %v", covered)
}

// sameAnalysis compares two answers by value.
func sameAnalysis(a, b *catalog.AnalysisResult) string {
	switch {
	case a.MatchedRowCount != b.MatchedRowCount:
		return fmt.Sprintf("matched %d vs %d", a.MatchedRowCount, b.MatchedRowCount)
	case (a.GroupCount == nil) != (b.GroupCount == nil) || a.GroupCount != nil && *a.GroupCount != *b.GroupCount:
		return fmt.Sprintf("groups %v vs %v", a.GroupCount, b.GroupCount)
	case a.EmptyGroups != b.EmptyGroups:
		return fmt.Sprintf("empty groups %d vs %d", a.EmptyGroups, b.EmptyGroups)
	case a.Tied != b.Tied:
		return fmt.Sprintf("tied %d vs %d", a.Tied, b.Tied)
	case fmt.Sprint(a.Columns) != fmt.Sprint(b.Columns):
		return fmt.Sprintf("columns %v vs %v", a.Columns, b.Columns)
	case len(a.Rows) != len(b.Rows):
		return fmt.Sprintf("rows %d vs %d", len(a.Rows), len(b.Rows))
	case fmt.Sprint(a.HasMore) != fmt.Sprint(b.HasMore) && (a.HasMore == nil || b.HasMore == nil || *a.HasMore != *b.HasMore):
		return "has_more differs"
	}
	for i := range a.Rows {
		for j := range a.Rows[i] {
			if !sameAnalysisValue(b.Rows[i][j], a.Rows[i][j]) {
				return fmt.Sprintf("row %d col %s: duckdb %#v, clickhouse %#v\n%v\n%v", i, a.Columns[j], a.Rows[i][j], b.Rows[i][j], a.Rows[i], b.Rows[i])
			}
		}
	}
	return ""
}
