// Command datadesk-bench measures every path of datadesk against its
// baseline (DuckDB's own readers and the statements a person would write,
// run in the same process and the same run), many owners on one server,
// and writes the Markdown report and chart. It is apart from the server's
// binary, which it runs as a process where a path is a process's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"datadesk/bench"
	"datadesk/engine"
	"datadesk/engine/clickhouse"
)

const usage = `datadesk-bench: every path of datadesk against its baseline

usage:
  datadesk-bench [--rows 1000000] [--repeat 5] [--out results] [--backend duckdb|clickhouse --clickhouse URL,URL] [--datadesk bin/datadesk]
  datadesk-bench --owners 200,1000 [--owner-rows 50000] [--max-open 32] [--memory-limit 1GB] [--datadesk bin/datadesk]
`

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Print(usage)
		return
	}
	if err := runBench(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "datadesk-bench:", err)
		}
		os.Exit(1)
	}
}

// runBench measures every path against its baseline and writes the report.
func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	rows := fs.Int("rows", 1_000_000, "rows of the generated table (10000000 for the full run)")
	repeat := fs.Int("repeat", 5, "runs of each path and its baseline")
	out := fs.String("out", "results", "folder for report.md, report.json and chart.png")
	work := fs.String("work", "", "work folder for inputs and databases (a temp folder if empty)")
	corpus := fs.String("corpus", envOr("DATADESK_CORPUS", filepath.Join("ingest", "testdata", "sheetjs")),
		"folder of real workbooks; XLS ingest is measured on its largest .xls with an XLSX twin")
	backend := fs.String("backend", "duckdb", "duckdb: every path; clickhouse: the query_table paths on the cluster of --clickhouse")
	owners := fs.String("owners", "", "measure many owners instead: owner counts, for example 200,1000, each beside 10 owners")
	ownerRows := fs.Int("owner-rows", 50_000, "with --owners: rows of each owner's table")
	calls := fs.Int("calls", 0, "with --owners: calls of each load after every owner's first call (default 2,000)")
	maxOpen := fs.Int("max-open", engine.DefaultMaxOpen, "with --owners: the server's --max-open")
	memoryLimit := fs.String("memory-limit", engine.DefaultMemoryLimit, "with --owners: the server's --memory-limit")
	only := fs.String("only", "", "measure only these groups of paths, comma-separated: "+strings.Join(bench.Groups, ", "))
	nodeModules := fs.String("node-modules", os.Getenv("DATADESK_NODE_MODULES"),
		"folder whose node_modules holds @duckdb/node-api: compare query_table over HTTP with DuckDB in Node (the nodejs paths)")
	cf := clickhouse.AddFlags(fs)
	self := fs.String("datadesk", "", "the datadesk binary measured as a process (serve, ingest): default datadesk beside this command, then bin/datadesk, then datadesk on PATH")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, g := range splitList(*only) {
		if !slices.Contains(bench.Groups, g) {
			return fmt.Errorf("bench: --only takes %s, not %q", strings.Join(bench.Groups, ", "), g)
		}
	}
	if *owners != "" {
		var counts []int
		for _, s := range splitList(*owners) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return fmt.Errorf("bench: --owners wants owner counts such as 200,1000, not %q", s)
			}
			counts = append(counts, n)
		}
		exe, err := findDatadesk(*self)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: serving with %s\n", exe)
		rep, err := bench.Owners(context.Background(), bench.OwnersConfig{Owners: counts, Rows: *ownerRows, Calls: *calls,
			Engine: engine.Config{MaxOpen: *maxOpen, MemoryLimit: *memoryLimit}, Server: []string{exe, "serve"},
			Dir: *work, Results: *out, Progress: stderr})
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, rep.Markdown())
		fmt.Fprintf(stdout, "\nwritten to %s\n", filepath.Join(*out, "owners.md"))
		return nil
	}
	cfg := bench.Config{Rows: *rows, Repeat: *repeat, Results: *out, Dir: *work, Progress: stderr, Corpus: *corpus, Only: splitList(*only),
		NodeModules: *nodeModules}
	if exe, err := findDatadesk(*self); err == nil {
		cfg.Self = exe
		fmt.Fprintf(stderr, "bench: measuring %s as a process\n", exe)
	} else {
		fmt.Fprintf(stderr, "bench: %v; the paths measured as a process are left out\n", err)
	}
	switch *backend {
	case "duckdb":
	case "clickhouse":
		ch, err := cf.Client()
		if err != nil {
			return err
		}
		if ch == nil {
			return errors.New("bench: --backend clickhouse needs --clickhouse URL,URL (or DATADESK_CLICKHOUSE)")
		}
		cfg.ClickHouse = ch
	default:
		return fmt.Errorf("bench: unknown backend %q; use duckdb or clickhouse", *backend)
	}
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.Markdown())
	fmt.Fprintf(stdout, "\nwritten to %s\n", filepath.Join(*out, "report.md"))
	return nil
}

// findDatadesk is the datadesk binary to run: the one named, else
// datadesk beside this command, bin/datadesk, or datadesk on PATH.
func findDatadesk(named string) (string, error) {
	if named != "" {
		if _, err := os.Stat(named); err != nil {
			return "", fmt.Errorf("--datadesk %s: %w", named, err)
		}
		return filepath.Abs(named)
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "datadesk")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	if st, err := os.Stat(filepath.Join("bin", "datadesk")); err == nil && !st.IsDir() {
		return filepath.Abs(filepath.Join("bin", "datadesk"))
	}
	if p, err := exec.LookPath("datadesk"); err == nil {
		return p, nil
	}
	return "", errors.New("no datadesk binary: build one (make build writes bin/datadesk) and name it with --datadesk")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
