package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"datadesk/api"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/internal/testenv"
	"datadesk/rbac"
)

// TestBenchSmoke runs the whole benchmark on a small table: every path and
// baseline must run to the end and the report must be written. It asserts
// nothing about times.
func TestBenchSmoke(t *testing.T) {
	out := t.TempDir()
	corpus := os.Getenv("DATADESK_SHEETJS")
	if corpus == "" {
		corpus = filepath.Join("..", "ingest", "testdata", "sheetjs")
	}
	rep, err := Run(context.Background(), Config{Rows: 3000, Repeat: 1, Results: out, HTTPCalls: 16, Corpus: corpus})
	if err != nil {
		t.Fatal(err)
	}
	// The XLS row needs the corpus; without it the report says so. Three
	// rows are the load paths' layouts, one the upload over HTTP.
	results, notes := 18+len(analyses), 1
	if xls, _ := largestTwin(corpus); xls == "" {
		results, notes = 17+len(analyses), 2
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

// TestOwnersSmoke runs the many-owners measure on a few small owners, with
// the server as a process of its own: every load must run without a failed
// call and the report must be written. It asserts nothing about times.
func TestOwnersSmoke(t *testing.T) {
	out := t.TempDir()
	rep, err := Owners(context.Background(), OwnersConfig{Owners: []int{12}, BaseOwners: 3, Rows: 500, ColdRows: 2000, Calls: 60,
		Engine: engine.Config{MaxOpen: 4, MemoryLimit: "256MB"}, Server: []string{os.Args[0]}, ServerEnv: []string{testServerEnv + "=1"},
		Results: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 1 || rep.Pairs[0][1].Owners != 12 || rep.Pairs[0][0].Owners != 3 {
		t.Fatalf("pairs: %+v", rep.Pairs)
	}
	for _, r := range rep.Pairs[0] {
		if r.Failures != 0 || r.P50 <= 0 || r.PeakMiB <= 0 || r.Throughput <= 0 {
			t.Errorf("%d owners: %+v", r.Owners, r)
		}
	}
	if c := rep.Cold; c.RestartCold <= 0 || c.RoomCold <= 0 || c.Calls != coldOwners {
		t.Errorf("cold calls: %+v", c)
	}
	md, _ := os.ReadFile(filepath.Join(out, "owners.md"))
	for _, want := range []string{"| 12 |", "after a restart", "closed for room"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// testServerEnv makes the test binary a server, for the measures that run
// one as a process of its own.
const testServerEnv = "DATADESK_BENCH_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) == "1" {
		if err := serveForTest(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveForTest serves the data directory of the flags as `datadesk serve`
// would, until SIGTERM.
func serveForTest(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	data := fs.String("data", "", "")
	maxOpen := fs.Int("max-open", 0, "")
	memoryLimit := fs.String("memory-limit", "", "")
	threads := fs.Int("threads", 0, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	policy, err := rbac.NewPolicy(rbac.DefaultPolicy)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	node, err := startNode(ctx, engine.Config{Dir: *data, MaxOpen: *maxOpen, MemoryLimit: *memoryLimit, Threads: *threads},
		users, policy, ingest.New(ingest.Config{}), api.ClusterConfig{}, *addr)
	defer node.close()
	if err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// TestNodeJSSmoke runs the comparison with DuckDB in Node on a small table,
// with the @duckdb/node-api that DATADESK_NODE_MODULES names, or else the
// one make deps installs into .node.
func TestNodeJSSmoke(t *testing.T) {
	modules := os.Getenv("DATADESK_NODE_MODULES")
	if modules == "" {
		modules, _ = filepath.Abs(filepath.Join("..", ".node"))
	}
	if _, err := os.Stat(filepath.Join(modules, "node_modules", "@duckdb", "node-api")); err != nil {
		testenv.Missing(t, "no @duckdb/node-api in %s (make deps installs it when npm is there)", modules)
	}
	rep, err := Run(context.Background(), Config{Rows: 3000, Repeat: 2, Results: t.TempDir(), Only: []string{"nodejs"}, NodeModules: modules})
	if err != nil {
		t.Fatal(err)
	}
	// Each query asked once and again (from the answers' cache), and the
	// CSV export.
	if want := 2*len(queries) + 1; len(rep.Results) != want {
		t.Fatalf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		if len(r.Base.Times) != 2 || len(r.Subject.Times) != 2 || r.Base.Median() <= 0 || r.Base.PeakMiB <= 0 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
}
