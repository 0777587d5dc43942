package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/internal/testenv"
)

// TestBenchClusterSmoke runs the cluster benchmark on a small table
// against a local two-shard cluster: every path must run and be reported.
// It asserts nothing about times.
func TestBenchClusterSmoke(t *testing.T) {
	cluster, err := clickhousetest.Start(2)
	if errors.Is(err, clickhousetest.ErrNoServer) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	ch, err := clickhouse.New(clickhouse.Config{Nodes: cluster.Nodes, Cluster: cluster.Name, Database: cluster.Database})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Rows: 2000, Repeat: 1, Results: t.TempDir(), ClickHouse: ch})
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2*len(queries); len(rep.Results) != want {
		t.Errorf("%d results, want %d", len(rep.Results), want)
	}
	md := rep.Markdown()
	for _, want := range []string{"move to the cluster", "clickhouse query_table: deep offset", "clickhouse vs duckdb: top 20 sorted"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
