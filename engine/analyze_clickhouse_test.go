package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestClickHouseAnalysisEquivalence loads the oracle's tables into DuckDB
// and, moved, into a two-shard ClickHouse cluster, and asks both the same
// random analyses: the answers are the same, or, for a measure over the
// groups, the cluster's documented 400 naming what it lacks.
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
		if e := datadesk.AsError(err); e != nil && e.Code == datadesk.Invalid && e.Field == "top.ties" {
			if want.Tied == 0 || a.Top.Ties == "cut" {
				t.Errorf("analysis %d %s: %v, though duckdb found %d tied", n, aj, err, want.Tied)
			}
			covered["refused ties"]++
			continue
		}
		if e := datadesk.AsError(err); a.Windows == catalog.WindowsAll && !window(a) && e != nil && e.Code == datadesk.Invalid && e.Field == "windows" {
			covered["refused windows all"]++
			continue
		}
		if window(a) {
			e := datadesk.AsError(err)
			if e == nil || e.Code != datadesk.Invalid || !strings.HasPrefix(e.Field, "measures[") ||
				!strings.Contains(e.Message, "no window functions") {
				t.Errorf("analysis %d %s with a measure over the groups: %v, want the documented 400", n, aj, err)
			}
			covered["refused window"]++
			continue
		}
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
	}
	// Every op and bucket of the catalog's table but the measures over the
	// groups, which ClickHouse 18.16 refuses ("refused window").
	want := []string{"filter group", "nested filter group", "expr", "having", "top", "lookup", "sort_by", "offset", "refused window",
		"ties cut", "refused ties"}
	for _, op := range catalog.MeasureTable {
		if !op.OverGroups {
			want = append(want, op.Name)
		}
	}
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

// window reports whether an analysis asks for a measure over the groups.
func window(a catalog.Analysis) bool {
	for _, m := range a.Measures {
		switch m.Op {
		case "change", "pct_change", "running_total", "rank":
			return true
		}
	}
	return false
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
