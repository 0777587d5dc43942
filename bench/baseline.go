package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"datadesk/engine"
	"datadesk/engine/ducksql"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Baseline is a DuckDB instance with the engine's settings, its storage
// laid out as owners' databases are, that may read and write one folder.
// Benchmarks measure the engine's paths against DuckDB's own readers and
// writers on it, in the same run.
type Baseline struct {
	// ctl holds the instance: closing it closes the connector.
	ctl    *sql.DB
	db     *sql.DB
	folder string
}

// baselineCatalog is the name the baseline's database is attached as.
const baselineCatalog = "baseline"

// OpenBaseline opens a fresh database in dir whose SQL may touch folder only.
func OpenBaseline(ctx context.Context, cfg engine.Config, dir, folder string) (*Baseline, error) {
	connector, err := duckdb.NewConnector(":memory:?"+engine.InstanceSettings(cfg).Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("bench: baseline: %w", err)
	}
	ctl := sql.OpenDB(connector)
	// allowed_directories must be set while external access is still on;
	// then access is closed and the configuration locked, as for owners.
	for _, stmt := range []string{
		engine.AttachStatement(filepath.Join(dir, "baseline.duckdb"), baselineCatalog),
		`SET GLOBAL allowed_directories = [` + ducksql.Literal(strings.TrimSuffix(folder, "/")+"/") + `]`,
		`SET GLOBAL enable_external_access = false`,
		`SET GLOBAL lock_configuration = true`,
	} {
		if _, err := ctl.ExecContext(ctx, stmt); err != nil {
			ctl.Close()
			return nil, fmt.Errorf("bench: baseline: %w", err)
		}
	}
	b := &Baseline{ctl: ctl, db: sql.OpenDB(engine.InCatalog(connector, baselineCatalog)), folder: folder}
	b.db.SetMaxOpenConns(1)
	return b, nil
}

// Close closes the baseline database.
func (b *Baseline) Close() error {
	err := b.db.Close()
	if cerr := b.ctl.Close(); err == nil {
		err = cerr
	}
	return err
}

// Exec runs one statement. stmt may name a file of the folder as {path},
// which is replaced by the quoted path.
func (b *Baseline) Exec(ctx context.Context, stmt, path string) error {
	_, err := b.db.ExecContext(ctx, strings.ReplaceAll(stmt, "{path}", ducksql.Literal(path)))
	return err
}

// AppendStrings creates table (width VARCHAR columns) and appends rows with
// the Appender, the fastest way into DuckDB.
func (b *Baseline) AppendStrings(ctx context.Context, table string, width int, rows func(yield func([]string) error) error) error {
	cols := make([]string, width)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i+1) + " VARCHAR"
	}
	if _, err := b.db.ExecContext(ctx, `CREATE OR REPLACE TABLE `+ducksql.Ident(table)+` (`+strings.Join(cols, ", ")+`)`); err != nil {
		return err
	}
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		ap, err := duckdb.NewAppender(dc.(driver.Conn), baselineCatalog, "main", table)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, width)
		err = rows(func(r []string) error {
			for i := range vals {
				if i < len(r) && r[i] != "" {
					vals[i] = r[i]
				} else {
					vals[i] = nil
				}
			}
			return ap.AppendRow(vals...)
		})
		if cerr := ap.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
