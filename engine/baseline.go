package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

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
func OpenBaseline(ctx context.Context, cfg Config, dir, folder string) (*Baseline, error) {
	cfg.setDefaults()
	q := url.Values{}
	q.Set("autoload_known_extensions", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("allow_community_extensions", "false")
	q.Set("threads", strconv.Itoa(cfg.Threads))
	q.Set("memory_limit", cfg.MemoryLimit)
	q.Set("max_temp_directory_size", cfg.MaxTempSize)
	setOwnerStorage(q)
	connector, err := duckdb.NewConnector(":memory:?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("engine: baseline: %w", err)
	}
	ctl := sql.OpenDB(connector)
	// allowed_directories must be set while external access is still on;
	// then access is closed and the configuration locked, as for owners.
	for _, stmt := range []string{
		`ATTACH ` + quoteLiteral(filepath.Join(dir, "baseline.duckdb")) + ` AS ` + ducksql.Ident(baselineCatalog) + attachOptions,
		`SET GLOBAL allowed_directories = [` + quoteLiteral(strings.TrimSuffix(folder, "/")+"/") + `]`,
		`SET GLOBAL enable_external_access = false`,
		`SET GLOBAL lock_configuration = true`,
	} {
		if _, err := ctl.ExecContext(ctx, stmt); err != nil {
			ctl.Close()
			return nil, fmt.Errorf("engine: baseline: %w", err)
		}
	}
	b := &Baseline{ctl: ctl, db: sql.OpenDB(catalogConnector{base: connector, catalog: baselineCatalog}), folder: folder}
	b.db.SetMaxOpenConns(1)
	return b, nil
}

// quoteLiteral quotes a SQL string literal, for paths the benchmark made.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

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
	_, err := b.db.ExecContext(ctx, strings.ReplaceAll(stmt, "{path}", quoteLiteral(path)))
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

// Drain runs a query the engine built (a plan's SQL) on the store's own
// database and reads every row, for measuring a path against its SQL run
// directly.
func (s *Store) Drain(ctx context.Context, query string, args ...any) (int, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, classify(ctx, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// CopyAsWritten copies table id with CREATE TABLE AS, the layout DuckDB
// gives a table written in one go, for measuring a stored table's scans
// against it; drop removes the copy.
func (s *Store) CopyAsWritten(ctx context.Context, id string) (copyID string, drop func() error, err error) {
	copyID = id + "__as_written"
	if _, err := s.db.ExecContext(ctx, `CREATE OR REPLACE TABLE data.`+ducksql.Ident(copyID)+` AS SELECT * FROM data.`+ducksql.Ident(id)); err != nil {
		return "", nil, classify(ctx, err)
	}
	return copyID, func() error {
		_, err := s.db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS data.`+ducksql.Ident(copyID))
		return err
	}, nil
}
