package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
)

// runCluster measures the query_table paths on a table held by the
// ClickHouse cluster: each beside its compiled statements run directly on
// the cluster (the overhead of the engine), and beside the same query on
// the same rows in DuckDB (the two backends side by side).
func (r *runner) runCluster() (*Report, error) {
	err := r.writeTableCSV()
	if err != nil {
		return nil, err
	}
	if r.eng, err = engine.New(engine.Config{Dir: filepath.Join(r.dir, "data"), MemoryLimit: "2GB", Remote: r.cfg.ClickHouse}); err != nil {
		return nil, err
	}
	defer r.eng.Close()
	var release func()
	if r.store, release, err = r.eng.Acquire(r.ctx, datadesk.NewID("u")); err != nil {
		return nil, err
	}
	defer release()
	r.in = ingest.New(ingest.Config{})
	r.bar = progressbar.NewOptions(2*len(queries)*r.cfg.Repeat+1, progressbar.OptionSetWriter(r.cfg.Progress),
		progressbar.OptionSetDescription("measuring on the cluster"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	local, err := r.ingest("table.csv")
	if err != nil {
		return nil, err
	}
	copied, err := r.ingest("table.csv")
	if err != nil {
		return nil, err
	}
	move := &Result{Name: "move to the cluster", Baseline: "none", Note: fmt.Sprintf("%d rows, once", r.cfg.Rows)}
	remote := &copied.Tables[0]
	if err := timeIt(&move.Subject, func() error {
		remote, err = r.store.MoveTable(r.ctx, remote.ID, catalog.LocationClickHouse)
		return err
	}); err != nil {
		return nil, err
	}
	defer func() {
		_ = r.store.DeleteFile(r.ctx, copied.ID)
	}()
	r.report.Results = append(r.report.Results, *move)
	r.bar.Add(1)
	if err := r.clusterQueries(&local.Tables[0], remote); err != nil {
		return nil, err
	}
	r.bar.Finish()
	if err := writeReport(r.report, r.cfg.Results); err != nil {
		return nil, err
	}
	return r.report, nil
}

// writeTableCSV writes the generated table as in/table.csv.
func (r *runner) writeTableCSV() error {
	if err := os.MkdirAll(filepath.Join(r.dir, "in"), 0o755); err != nil {
		return err
	}
	fh, err := os.Create(r.path("table.csv"))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fh, 1<<20)
	if err := WriteCSV(bw, r.cfg.Rows); err != nil {
		fh.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// clusterQueries measures each query on the remote table beside its
// statements run directly, and beside the same query on the local table.
func (r *runner) clusterQueries(local, remote *catalog.Table) error {
	for _, q := range queries {
		query, err := benchQuery(q.args, r.cfg.Rows)
		if err != nil {
			return err
		}
		run := func(id string) func() error {
			return func() error {
				query.FileID = id
				p, err := r.store.Plan(r.ctx, query)
				if err != nil {
					return err
				}
				_, err = r.store.Run(r.ctx, p)
				return err
			}
		}
		query.FileID = remote.ID
		plan, err := r.store.Plan(r.ctx, query)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.name, err)
		}
		stmts, err := r.cfg.ClickHouse.Statements(plan)
		if err != nil {
			return err
		}
		direct := &Result{Name: "clickhouse query_table: " + q.name, Baseline: "its ClickHouse SQL run directly", Target: 1.10}
		if err := r.pair(direct, func() error { _, err := r.cfg.ClickHouse.Drain(r.ctx, stmts...); return err }, run(remote.ID)); err != nil {
			return err
		}
		side := &Result{Name: "clickhouse vs duckdb: " + q.name, Baseline: "the same query on DuckDB", Note: "same rows, two shards on this machine"}
		if err := r.pair(side, run(local.ID), run(remote.ID)); err != nil {
			return err
		}
	}
	return nil
}

// benchQuery reads a query's arguments as the API does, keeping numbers
// exact, with its offset kept inside the table.
func benchQuery(args string, rows int) (catalog.Query, error) {
	var q catalog.Query
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&q); err != nil && err != io.EOF {
		return q, err
	}
	q.Offset = min(q.Offset, max(rows-20, 0))
	return q, nil
}
