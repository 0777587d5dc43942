package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"datadesk/engine/ducksql"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// hub is the one DuckDB instance of an Engine. Owners' database files are
// attached to it on demand and detached when idle, so every owner shares
// one buffer pool, one thread pool and one temp directory, bounded as a
// whole by the Config's MemoryLimit, Threads and MaxTempSize. Opening an
// instance costs about 15 ms; attaching a file to a running one, under a
// millisecond (docs/many-owners.md).
//
// The instance is hardened once, before any owner's statement runs: SQL may
// reach files under the owners' folder only (to attach their databases and
// read their uploads), no extension loads, and the configuration is
// locked. Which owner a statement is for is fixed by its connection: each
// owner's connections have that owner's database as their default catalog
// (catalogConnector), and the engine never names a catalog in SQL.
type hub struct {
	connector *duckdb.Connector
	// ctl runs ATTACH and DETACH.
	ctl *sql.DB
}

// openHub opens the hub of cfg.Dir.
func openHub(ctx context.Context, cfg Config) (*hub, error) {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	temp := filepath.Join(dir, "tmp")
	// Spill files of an earlier process are never read again.
	if err := os.RemoveAll(temp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(temp, 0o700); err != nil {
		return nil, err
	}
	limit, err := ParseSize("memory limit", cfg.MemoryLimit)
	if err != nil {
		return nil, err
	}
	if _, err := ParseSize("temp space limit", cfg.MaxTempSize); err != nil {
		return nil, err
	}
	q := InstanceSettings(cfg)
	q.Set("memory_limit", strconv.FormatInt(poolBytes(limit, cfg.HeldBeside), 10)+"B")
	q.Set("temp_directory", temp)
	connector, err := duckdb.NewConnector(":memory:?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	h := &hub{connector: connector, ctl: sql.OpenDB(connector)}
	for _, stmt := range []string{
		`SET GLOBAL allowed_directories = [` + ducksql.Literal(filepath.Join(dir, "owners")+string(filepath.Separator)) + `]`,
		`SET GLOBAL enable_external_access = false`,
		`SET GLOBAL lock_configuration = true`,
	} {
		if _, err := h.ctl.ExecContext(ctx, stmt); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// The storage layout of owners' databases. DuckDB keeps the rows a
// transaction adds in memory, block by block for each column, until they
// fill a row group, which it then writes to the file (or until the
// commit); what a load holds is therefore about a block for every column
// and a row group of rows. Owners' databases have DuckDB's own blocks of
// 256 KiB and full row groups of 122,880 rows, the layout a copy of a
// table made by CREATE TABLE AS in a DuckDB of its defaults has. A column
// segment never spans blocks, so blocks of 64 KiB (which databases made
// for a while have, for the smaller hold of a wide load: 117 MiB against
// 194 for 256 columns of 50,000 rows) cut every column into about four
// times the segments, each with its own dictionary, and a contains filter
// over them took 2.3 times as long (docs/performance.md). Row groups of
// 16,384 rows, which held less of a wide load too, made every scan slower
// as well, and tables written so are rewritten in the background
// (compact.go). Wide loads stay bounded by the server's width for its
// memory limit (widthFor), which counts a block of 256 KiB a column.
//
// The block size is fixed when a database is made (DuckDB reads it from
// the file's header, so databases made before keep theirs); the row group
// size is a setting of each attach, and applies to the row groups written
// from then on.
const (
	ownerBlockSize = 256 << 10
	ownerRowGroup  = 122_880
)

// InstanceSettings are the settings of a DuckDB instance as the engine
// opens one, for cfg (defaults filled in): no extension loads, cfg's
// threads, memory and temp space, and the owners' storage layout: a load
// writes each row group to the file as it fills, not five at a time
// (DuckDB's default), so what it holds does not grow with its rows, and
// databases made have blocks of ownerBlockSize. The engine's own instance
// sets its memory share and temp folder over them; a benchmark's baseline
// takes them as they are, to compare like with like.
//
// A division by zero is empty (NULL), as an analysis's computed measures,
// shares and changes document, rather than IEEE 754's infinity or NaN:
// DuckDB's ieee_floating_point_ops off, for every type. Guarding each
// divisor with NULLIF instead cost DuckDB 0.1 to 0.3 ms to plan a call
// (docs/performance.md); arithmetic on stored infinities and NaNs is
// unchanged.
func InstanceSettings(cfg Config) url.Values {
	cfg.setDefaults()
	q := url.Values{}
	q.Set("autoload_known_extensions", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("allow_community_extensions", "false")
	q.Set("threads", strconv.Itoa(cfg.Threads))
	q.Set("memory_limit", cfg.MemoryLimit)
	q.Set("max_temp_directory_size", cfg.MaxTempSize)
	q.Set("write_buffer_row_group_count", "1")
	q.Set("ieee_floating_point_ops", "false")
	q.Set("default_block_size", strconv.Itoa(ownerBlockSize))
	return q
}

// attachWait bounds how long attach waits for a detached database to be
// let go.
const attachWait = 10 * time.Second

// attachOptions are the options of every ATTACH of an owner's database.
var attachOptions = ` (ROW_GROUP_SIZE ` + strconv.Itoa(ownerRowGroup) + `)`

// AttachStatement attaches the database file at path as catalog, with the
// options of an owner's database.
func AttachStatement(path, catalog string) string {
	return `ATTACH ` + ducksql.Literal(path) + ` AS ` + ducksql.Ident(catalog) + attachOptions
}

// attach attaches the database file at path as catalog, again while
// the file is in a state that passes (attachAgain).
func (h *hub) attach(ctx context.Context, catalog, path string) error {
	start := time.Now()
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 50*time.Millisecond) {
		_, err := h.ctl.ExecContext(ctx, AttachStatement(path, catalog))
		if err == nil || !attachAgain(err) || time.Since(start) > attachWait {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// attachAgain reports whether an ATTACH failed on a state of the file
// that passes. A database detached a moment ago stays registered while a
// statement that began before the DETACH still refers to it (DuckDB
// closes it with its last reference; a statement listing every catalog,
// such as duckdb_tables(), refers to them all). And a database that
// another DuckDB instance of this process is closing (an engine closed a
// moment ago: DuckDB's file lock is the process's, so it does not keep
// this one out) has its write-ahead log removed by that instance's last
// checkpoint, between this ATTACH finding the log and reading it. DuckDB
// gives neither case an error type of its own.
func attachAgain(err error) bool {
	msg := err.Error()
	switch {
	case errIs(err, duckdb.ErrorTypeBinder):
		return strings.Contains(msg, "Unique file handle conflict")
	case errIs(err, duckdb.ErrorTypeIO):
		return strings.Contains(msg, "Cannot open file") && strings.Contains(msg, ".wal") && strings.Contains(msg, "No such file or directory")
	}
	return false
}

// detach detaches catalog; DuckDB checkpoints it first.
func (h *hub) detach(ctx context.Context, catalog string) error {
	_, err := h.ctl.ExecContext(ctx, `DETACH `+ducksql.Ident(catalog))
	return err
}

// catalog returns a pool of connections whose default catalog is catalog.
func (h *hub) catalog(catalog string) *sql.DB {
	db := sql.OpenDB(catalogConnector{base: h.connector, catalog: catalog})
	// Calls for one owner come a few at a time; more connections than
	// this are made and dropped as needed.
	db.SetMaxIdleConns(4)
	return db
}

func (h *hub) close() error {
	err := h.ctl.Close()
	if cerr := h.connector.Close(); err == nil {
		err = cerr
	}
	return err
}

// InCatalog makes connections of connector whose default catalog is
// catalog, an attached database, so that unqualified names resolve there.
func InCatalog(connector *duckdb.Connector, catalog string) driver.Connector {
	return catalogConnector{base: connector, catalog: catalog}
}

// catalogConnector makes connections to the hub whose default catalog is
// one attached database, so that unqualified names resolve there.
type catalogConnector struct {
	base    *duckdb.Connector
	catalog string
}

func (c catalogConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	exec, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("engine: the DuckDB driver's connection cannot execute")
	}
	if _, err := exec.ExecContext(ctx, `USE `+ducksql.Ident(c.catalog), nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c catalogConnector) Driver() driver.Driver { return c.base.Driver() }
