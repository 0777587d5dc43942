package engine

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// blockSize is the block size of the database attached as catalog.
func blockSize(t *testing.T, e *Engine, catalog string) int64 {
	t.Helper()
	var n int64
	if err := e.hub.ctl.QueryRowContext(context.Background(),
		`SELECT block_size FROM pragma_database_size() WHERE database_name = ?`, catalog).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// peakTables runs f and returns the most DuckDB held of tables in memory
// meanwhile, polled every few milliseconds.
func peakTables(t *testing.T, e *Engine, f func()) int64 {
	t.Helper()
	var peak atomic.Int64
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			var held int64
			if e.hub.ctl.QueryRowContext(context.Background(),
				`SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`).Scan(&held) == nil {
				peak.Store(max(peak.Load(), held))
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-polled
	return peak.Load()
}

// zerosSource is a counted table of width columns and rows rows of 0, as
// files.create gives one.
func zerosSource(width, rows int) TableSource {
	header := make([]string, width)
	counted := make([]typing.Stats, width)
	hints := make([]typing.Hint, width)
	for i := range header {
		header[i] = "c" + strconv.Itoa(i)
		for range rows {
			counted[i].Add("0")
		}
		hints[i] = typing.Hint{Type: typing.TypeInteger}
	}
	row, typed := make([]string, width), make([]any, width)
	for i := range row {
		row[i], typed[i] = "0", int64(0)
	}
	return TableSource{Name: "zeros.csv", Header: header, Hints: hints, Counted: counted,
		Rows: func(yield func([]string) error) (RowStats, error) {
			for range rows {
				if err := yield(row); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		},
		Typed: func(yield func([]string, []any) error) (RowStats, error) {
			for range rows {
				if err := yield(row, typed); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}}
}

// TestWideLoadHoldsLittle: a files.create call of 50,000 rows of 256 zeros
// (25.7 MB) makes DuckDB hold the uncommitted table in blocks of 256 KiB
// per column for values and validity until a row group of 122,880 rows
// fills or the load commits: 194 MiB. Blocks of 64 KiB held 117 MiB but
// cut every stored column into four times the segments and slowed its
// scans (hub.go). A load holds no more than four blocks a column here;
// DuckDB does not write an appended table's blocks out under its pool's
// pressure, so a load past the pool fails (TestWideLoadPastThePool).
func TestWideLoadHoldsLittle(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	owner := datadesk.NewID("u")
	s := acquire(t, e, owner)
	if got := blockSize(t, e, owner); got != ownerBlockSize {
		t.Errorf("a new owner's database has blocks of %d bytes, want %d", got, ownerBlockSize)
	}
	const width, rows = 256, 50_000
	src := zerosSource(width, rows)
	var f *catalog.File
	var err error
	held := peakTables(t, e, func() {
		f, err = s.AddFile(context.Background(), NewFile{Filename: "zeros.csv", TempPath: tempBytes(t, s, "zeros"), Tables: []TableSource{src}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tables[0].RowCount; got != rows {
		t.Fatalf("stored %d rows, want %d", got, rows)
	}
	t.Logf("DuckDB held at most %.1f MiB of tables", float64(held)/(1<<20))
	if limit := int64(4 * loadBlock * width); held > limit {
		t.Errorf("DuckDB held %.1f MiB of tables loading %d columns of %d rows; at most %d", float64(held)/(1<<20), width, rows, limit>>20)
	}
	var sum, n int64
	if err := s.db.QueryRowContext(context.Background(),
		`SELECT sum("c255"), count(*) FROM data.`+ducksql.Ident(f.Tables[0].ID)).Scan(&sum, &n); err != nil {
		t.Fatal(err)
	}
	if sum != 0 || n != rows {
		t.Errorf("the table reads sum %d over %d rows, want 0 over %d", sum, n, rows)
	}
}

// TestWideLoadPastThePool: the zeros of TestWideLoadHoldsLittle on a
// server whose pool is smaller than what their load holds (128 MB of a
// 160 MB limit, against 194 MiB). widthFor lets 256 columns through, as
// it counts a block a column; DuckDB's appender then runs out of memory
// and says so with no error type. The call is refused as too large for
// the server, not failed as the server's own error, and leaves nothing
// behind: the owner's next load stores its table.
func TestWideLoadPastThePool(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "160MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	_, err = s.AddFile(ctx, NewFile{Filename: "zeros.csv", TempPath: tempBytes(t, s, "zeros"), Tables: []TableSource{zerosSource(256, 50_000)}})
	if code := datadesk.ErrorCode(err); code != datadesk.TooLarge {
		t.Fatalf("got %v (%s), want %s", err, code, datadesk.TooLarge)
	}
	if pub := datadesk.PublicOf(err); !strings.Contains(pub.Message, "more memory than this server allows") {
		t.Errorf("the error says %q", pub.Message)
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "narrow.csv", TempPath: tempBytes(t, s, "narrow"), Tables: []TableSource{zerosSource(4, 1_000)}})
	if err != nil {
		t.Fatal(err)
	}
	if files, err := s.Files(ctx, "", 10); err != nil || len(files) != 1 || files[0].ID != f.ID {
		t.Errorf("the owner has %d files (%v), want only the narrow one", len(files), err)
	}
}

// TestOlderLayoutStillServes: a database made with blocks of 64 KiB, as
// owners' databases were for a while, keeps its blocks and takes new
// tables.
func TestOlderLayoutStillServes(t *testing.T) {
	e := newEngine(t)
	owner := datadesk.NewID("u")
	path := filepath.Join(e.OwnerDir(owner), "owner.duckdb")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	for _, q := range []string{"ATTACH " + ducksql.Literal(path) + " AS older (BLOCK_SIZE 65536)", "CREATE TABLE older.made_before (i INTEGER)", "DETACH older"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := acquire(t, e, owner)
	if got := blockSize(t, e, owner); got != 64<<10 {
		t.Errorf("an older database has blocks of %d bytes, want 65536", got)
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "zeros.csv", TempPath: tempBytes(t, s, "zeros"), Tables: []TableSource{zerosSource(3, 40_000)}})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := s.db.QueryRowContext(context.Background(), `SELECT count(*) FROM data.`+ducksql.Ident(f.Tables[0].ID)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 40_000 {
		t.Errorf("read %d rows, want 40000", n)
	}
}

// TestFileKeptUntilDeleted: a file read once is answered from memory, a
// copy its reader may change, and no longer once it is deleted.
func TestFileKeptUntilDeleted(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	owner := datadesk.NewID("u")
	s := acquire(t, e, owner)
	ctx := context.Background()
	f, err := s.AddFile(ctx, NewFile{Filename: "zeros.csv", TempPath: tempBytes(t, s, "zeros"), Tables: []TableSource{zerosSource(2, 10)}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.File(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	first.Filename, first.Tables[0].Name = "changed.csv", "changed"
	again, err := s.File(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Filename != "zeros.csv" || again.Tables[0].Name == "changed" {
		t.Errorf("a change to the file read was kept: %q, table %q", again.Filename, again.Tables[0].Name)
	}
	if err := s.DeleteFile(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.File(ctx, f.ID); datadesk.ErrorCode(err) != datadesk.NotFound {
		t.Errorf("the deleted file reads %v, want not_found", err)
	}
}
