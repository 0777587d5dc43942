package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/cluster"
)

// TestBenchSmoke runs the whole benchmark on a small table: every path and
// baseline must run to the end and the report must be written. It asserts
// nothing about times.
func TestBenchSmoke(t *testing.T) {
	out := t.TempDir()
	corpus := os.Getenv("DATADESK_SHEETJS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "shared", "data", "spreadsheets", "sheetjs")
	}
	rep, err := Run(context.Background(), Config{Rows: 3000, Repeat: 1, Results: out, HTTPCalls: 16, Corpus: corpus})
	if err != nil {
		t.Fatal(err)
	}
	// The XLS row needs the corpus; without it the report says so.
	results, notes := 14, 1
	if xls, _ := largestTwin(corpus); xls == "" {
		results, notes = 13, 2
	}
	// Tool calls through HAProxy need haproxy; without it the report says so.
	nodes := 2
	if _, err := cluster.HAProxyBinary(); err != nil {
		nodes, notes = 0, notes+1
	}
	if len(rep.Results) != results || len(rep.HTTP) != 3 || len(rep.Nodes) != nodes || len(rep.Memory) != notes {
		t.Errorf("%d results, %d HTTP rows, %d node rows, %d memory notes", len(rep.Results), len(rep.HTTP), len(rep.Nodes), len(rep.Memory))
	}
	for i, n := range rep.Nodes {
		if n.Nodes != i+1 || n.Calls == 0 || n.Throughput <= 0 {
			t.Errorf("node row %d: %+v", i, n)
		}
	}
	for _, name := range []string{"report.md", "report.json", "chart.png"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"CSV ingest", "JSON ingest", "XLSX ingest", "query_table: deep offset", "XLSX export", "CSV export", "browse: last page vs first, sorted", "| 16 |", "Tool calls through HAProxy"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
