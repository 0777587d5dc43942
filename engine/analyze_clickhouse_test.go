package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/internal/testenv"
)

// TestClickHouseAnalysisEquivalence loads the oracle's tables into DuckDB
// and, moved, into a two-shard ClickHouse cluster, and asks both the same
// random analyses, every one the oracle asks (measures over the groups,
// windows all, ties kept, first and last among them): the answers are
// the same.
func TestClickHouseAnalysisEquivalence(t *testing.T) {
	t.Parallel()
	analysisEquivalence(t, testClickHouse(t), 240)
}

// TestCurrentClickHouseAnalysisEquivalence asks the same of a current
// ClickHouse (chDB, npm's chdb, behind a test server of ClickHouse's HTTP
// interface), where the measures over the groups are window functions.
func TestCurrentClickHouseAnalysisEquivalence(t *testing.T) {
	t.Parallel()
	c, err := clickhousetest.StartChDB(nodeModules())
	if errors.Is(err, clickhousetest.ErrNoChDB) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ch.DetectVersion(context.Background())
	if err != nil || !v.WindowFunctions {
		t.Fatalf("chdb's version %q (%v): want one with window functions", v.Name, err)
	}
	analysisEquivalence(t, ch, 160)
}

// nodeModules is the folder npm's packages for the tests are in:
// $DATADESK_NODE_MODULES or the checkout's .node.
func nodeModules() string {
	if d := os.Getenv("DATADESK_NODE_MODULES"); d != "" {
		return d
	}
	return filepath.Join("..", ".node")
}

// analysisEquivalence loads the oracle's tables into DuckDB and, moved,
// into the cluster ch, and asks both random analyses (n of them) and the
// ones every capability needs: the answers must be the same.
func analysisEquivalence(t *testing.T, ch *clickhouse.Cluster, n int) {
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
	analyses := make([]catalog.Analysis, 0, n+100)
	for range n {
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
	// of cities, over the filtered buckets and over all, and ties kept of
	// decimal sums and modes.
	for _, of := range []catalog.Measure{{Op: "sum", Column: "price"}, {Op: "min", Column: "price"}, {Op: "avg", Column: "cases"},
		{Op: "mode", Column: "price"}} {
		of.Name = "x"
		for _, op := range []string{"change", "pct_change", "running_total", "rank"} {
			for _, windows := range []string{catalog.WindowsFiltered, catalog.WindowsAll} {
				analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "city"}, {Column: "day", Bucket: "month"}},
					Filters:  []catalog.FilterNode{{Column: "day", Op: "gte", Value: "2023-06-01"}},
					Measures: []catalog.Measure{of, {Op: op, Of: "x", Name: "w"}}, Windows: windows, SortBy: "w", Limit: catalog.MaxAnalysisPage})
			}
		}
		analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "country"}, {Column: "flag"}},
			Measures: []catalog.Measure{of}, Top: &catalog.Top{N: 1, Per: []string{"country"}, By: "x"}, Limit: catalog.MaxAnalysisPage})
	}
	// The mode of every type of column, sorted by it, and a decimal's
	// as the measure top ranks by.
	for _, col := range []string{"country", "city", "cases", "price", "day", "ts", "flag"} {
		analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "country"}, {Column: "day", Bucket: "quarter"}},
			Measures: []catalog.Measure{{Op: "mode", Column: col, Name: "m"}, {Op: "count"}}, SortBy: "m", Direction: "desc", Limit: catalog.MaxAnalysisPage})
	}
	analyses = append(analyses, catalog.Analysis{GroupBy: []catalog.GroupBy{{Column: "country"}, {Column: "city"}},
		Measures: []catalog.Measure{{Op: "mode", Column: "price", Name: "m"}}, Top: &catalog.Top{N: 2, Per: []string{"country"}, By: "m"},
		Limit: catalog.MaxAnalysisPage})
	// Three callers at once: each analysis waits on the servers more than
	// it computes.
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range 3 {
		wg.Go(func() {
			for n := range next {
				caps, ok := sameOnBoth(t, s, analyses[n], n, [2]*catalog.File{local, localLookup}, [2]*catalog.File{remote, remoteLookup})
				mu.Lock()
				for k := range caps {
					covered[k]++
				}
				if ok {
					covered["answered"]++
				}
				mu.Unlock()
			}
		})
	}
	for n := range analyses {
		if t.Failed() && covered["answered"] < n/2 {
			break
		}
		next <- n
	}
	close(next)
	wg.Wait()
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

// sameOnBoth asks analysis a (the n-th) of the tables on DuckDB and on
// the cluster and reports what it asked for and whether both answered
// the same.
func sameOnBoth(t *testing.T, s *Store, a catalog.Analysis, n int, duck, cluster [2]*catalog.File) (map[string]bool, bool) {
	ctx := context.Background()
	aj, _ := json.Marshal(a)
	run := func(tables [2]*catalog.File) (*catalog.AnalysisResult, error) {
		a.FileID = tables[0].ID
		if a.Lookup != nil {
			a.Lookup = &catalog.Lookup{FileID: tables[1].ID, On: a.Lookup.On}
		}
		p, err := s.PlanAnalysis(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		return s.Analyze(ctx, p)
	}
	want, err := run(duck)
	if err != nil {
		t.Errorf("analysis %d %s on duckdb: %v", n, aj, err)
		return nil, false
	}
	got, err := run(cluster)
	if err != nil {
		t.Errorf("analysis %d %s on clickhouse: %v", n, aj, err)
		return nil, false
	}
	if diff := sameAnalysis(want, got); diff != "" {
		t.Errorf("analysis %d %s\nclickhouse %s\n%s", n, aj, got.SQL, diff)
		return nil, false
	}
	caps := capabilities(a)
	if a.Top != nil && a.Top.Ties != "cut" && want.Tied > 0 {
		caps["ties kept"] = true
	}
	return caps, true
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
