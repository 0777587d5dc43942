package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"runtime"
	"slices"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// appendBatch is about how much text DuckDB is handed at a time when a
// typed table is made by appendTyped: each batch is cast and inserted
// before the next is taken. Measured: 1,000,000 XLSX rows of 8 columns
// peak about the same with 1 MiB and 4 MiB batches, 10 MiB more with 16
// and 40 MiB more with 32; a files.create table of 12 columns of long
// text peaks 30 MiB more with 4 MiB batches than with 1.
const appendBatch = 1 << 20

// minBatchRows is the fewest rows a batch has, whatever their width: each
// batch is a statement, planned and run, and batches of 256 rows of a
// table of 256 columns made its 50,000 rows take 27 s in DuckDB instead
// of 8.
const minBatchRows = 2048

// appended is the name under which the query appender's query reads a
// batch of rows; its columns are named as the staging table's.
const appended = "dd_appended"

// appendTyped creates the typed table t of rows of width text values (nil
// for NULL), such as a spool's: empty first, with the types the typed
// columns sel give, then filled by DuckDB's query appender, which takes
// the rows as text a batch at a time and inserts each batch cast by sel,
// in the rows' order. DuckDB holds a batch of text and the typed rows it
// has not yet written to the owner's file (a row group, as the engine has
// DuckDB write each one as it fills), where a staging table would hold
// every row as text until the transaction ends.
//
// defs are the table's column definitions, sel the select of them from
// the appended columns c1, c2 and on. Each column is taken as text, unless whole[i] says the rows give column
// i as int64 values (nil for NULL), which DuckDB then takes as they are:
// 8 bytes a value handed over with no C call and no cast, where text is a
// C call a value and a cast of each batch. Measured on files.create's 50,000
// rows of 256 zeros: the whole process grows 4.2 to 5.0 times the call's
// body instead of 6.2 to 8.6 (docs/performance.md has the times).
//
// The goroutine keeps its thread while it appends: DuckDB's allocator
// caches freed memory per thread, and the batches' memory, freed and
// taken again on whichever threads Go runs the calls on, made the process
// grow with the rows (an upload of 1,000,000 rows peaked at 113 MiB
// instead of 97).
func (s *Store) appendTyped(ctx context.Context, conn *sql.Conn, t *catalog.Table, defs, sel string, width int, whole []bool, rows func(yield func([]driver.Value) error) error) error {
	names := make([]string, width)
	text, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	if err != nil {
		return err
	}
	bigint, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	if err != nil {
		return err
	}
	types := slices.Repeat([]duckdb.TypeInfo{text}, width)
	for i := range names {
		names[i] = "c" + strconv.Itoa(i+1)
		if i < len(whole) && whole[i] {
			types[i] = bigint
		}
	}
	// The table is made from its columns' definitions, not from the
	// select: DuckDB plans a select of thousands of casts in time growing
	// with their square, once is enough.
	table := `data.` + ducksql.Ident(t.ID)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE `+table+` (`+defs+`)`); err != nil {
		return classify(ctx, err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = conn.Raw(func(dc any) error {
		ap, err := duckdb.NewQueryAppender(dc.(driver.Conn), `INSERT INTO `+table+` SELECT `+sel+` FROM `+appended, appended, types, names)
		if err != nil {
			return err
		}
		held, batch := 0, 0
		err = rows(func(vals []driver.Value) error {
			if err := ap.AppendRow(vals...); err != nil {
				return err
			}
			batch++
			// A value is 16 bytes in DuckDB, and its text past 12.
			held += 16 * len(vals)
			for _, v := range vals {
				if v, ok := v.(string); ok && len(v) > 12 {
					held += len(v)
				}
			}
			if held < appendBatch || batch < minBatchRows {
				return nil
			}
			held, batch = 0, 0
			if err := ctx.Err(); err != nil {
				return err
			}
			return ap.FlushWithCancel(ctx)
		})
		if err != nil {
			// The rows not yet inserted are dropped, not inserted on
			// closing.
			_ = ap.Clear()
			_ = ap.Close()
			return err
		}
		return ap.CloseWithCancel(ctx)
	})
	return classify(ctx, err)
}

// unspool puts spooled rows in the staging table, a VARCHAR column each,
// for a table that is stored elsewhere.
func (s *Store) unspool(ctx context.Context, conn *sql.Conn, stage string, st tallied) error {
	cols := make([]string, max(st.width, 1))
	for i := range cols {
		cols[i] = ducksql.StageColumn(i+1) + " VARCHAR"
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+ducksql.Ident(stage)+` (`+strings.Join(cols, ", ")+`)`); err != nil {
		return classify(ctx, err)
	}
	err := conn.Raw(func(dc any) error {
		ap, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", stage)
		if err != nil {
			return err
		}
		err = st.spool.each(st.width, func(vals []driver.Value) error { return ap.AppendRow(vals...) })
		closeErr := ap.Close()
		if err != nil {
			return err
		}
		return closeErr
	})
	return classify(ctx, err)
}
