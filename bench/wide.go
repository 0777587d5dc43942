package bench

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"datadesk/engine"
)

//go:embed readcsv.cjs
var readCSVScript []byte

// wideRows and wideCols are the wide file's size: a public statistics
// table's shape, where loads through DuckDB's readers once took 3.7 s.
const wideRows, wideCols = 249, 112

// wideIngest times a datadesk ingest process loading a wide CSV file beside
// a Node process loading it with DuckDB's read_csv, whole processes each,
// start-up included, in turns.
func (r *runner) wideIngest() error {
	modules := r.nodeDuckDBModules()
	if r.cfg.Self == "" || modules == "" {
		return nil
	}
	csv := r.path("wide.csv")
	if err := writeWide(csv); err != nil {
		return err
	}
	script := filepath.Join(r.dir, "readcsv.cjs")
	if err := os.WriteFile(script, readCSVScript, 0o644); err != nil {
		return err
	}
	database := filepath.Join(r.dir, "readcsv.duckdb")
	base := func() error {
		_ = os.Remove(database)
		cmd := exec.CommandContext(r.ctx, "node", script, database, csv, strconv.Itoa(engine.DefaultThreads), engine.DefaultMemoryLimit)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(modules, "node_modules"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("node read_csv: %w: %.2000s", err, out)
		}
		return nil
	}
	subject := func() error {
		cmd := exec.CommandContext(r.ctx, r.cfg.Self, "ingest", csv)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("datadesk ingest: %w: %.2000s", err, out)
		}
		return nil
	}
	res := &Result{
		Name:     fmt.Sprintf("Wide CSV ingest, %d rows x %d columns (whole processes)", wideRows, wideCols),
		Baseline: "a Node process: CREATE TABLE AS SELECT * FROM read_csv(...) (@duckdb/node-api)",
		Target:   2,
	}
	return r.pair(res, base, subject)
}

// nodeDuckDBModules is the folder whose node_modules holds @duckdb/node-api,
// or "" when Node or the package is missing.
func (r *runner) nodeDuckDBModules() string {
	if r.cfg.NodeModules == "" {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(r.cfg.NodeModules, "node_modules", "@duckdb", "node-api")); err != nil {
		return ""
	}
	return r.cfg.NodeModules
}

// writeWide writes a wide table: an identifier, then measures with two
// decimals, whole counts and a few words, in turn.
func writeWide(path string) error {
	var b strings.Builder
	b.WriteString("code")
	for c := 1; c < wideCols; c++ {
		fmt.Fprintf(&b, ",indicator %d", c)
	}
	b.WriteByte('\n')
	for i := range wideRows {
		fmt.Fprintf(&b, "R%05d", i)
		for c := 1; c < wideCols; c++ {
			switch c % 3 {
			case 0:
				fmt.Fprintf(&b, ",%d.%02d", (i*c)%9973, (i+c)%100)
			case 1:
				fmt.Fprintf(&b, ",%d", (i+1)*(c+7)%100003)
			default:
				fmt.Fprintf(&b, ",region %d", (i+c)%17)
			}
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
