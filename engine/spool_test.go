package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

func TestSpoolGivesBackItsRows(t *testing.T) {
	sp, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	rows := [][]driver.Value{
		{"a", nil, ""},
		{},
		{"only one"},
		{strings.Repeat("long ", 100_000), "é", nil},
		{nil, nil, nil},
	}
	for _, r := range rows {
		if err := sp.add(r); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]driver.Value
	if err := sp.each(3, func(vals []driver.Value) error {
		got = append(got, slices.Clone(vals))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := [][]driver.Value{
		{"a", nil, ""},
		{nil, nil, nil},
		{"only one", nil, nil},
		{strings.Repeat("long ", 100_000), "é", nil},
		{nil, nil, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("row %d: got %.40q, want %.40q", i, got[i], want[i])
		}
	}
	// A row wider than the width asked for is a broken spool, not a
	// row cut short.
	if err := sp.each(2, func([]driver.Value) error { return nil }); err == nil {
		t.Error("reading rows of 3 values as 2 succeeded")
	}
}

// TestLoadThroughGoHoldsARowGroup: rows read through Go (spreadsheets) were
// staged whole as text in a temporary table, which DuckDB keeps in memory
// until the load's transaction ends, beside the typed table: 1,000,000
// rows of an XLSX held 128 MiB of tables. They now go to a spool on disk
// and reach DuckDB a batch at a time; what DuckDB holds of tables stays
// about a row group, whatever the rows.
func TestLoadThroughGoHoldsARowGroup(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	const rows = 600_000
	header := []string{"id", "zip", "region", "amount", "day", "qty", "note", "flag"}
	kinds := slices.Repeat([]typing.CellKind{typing.KindText}, len(header))
	src := TableSource{Name: "wide.xlsx", Header: header,
		Cells: func(yield func([]string, []typing.CellKind) error) (RowStats, error) {
			row := make([]string, len(header))
			for i := range rows {
				row[0] = fmt.Sprintf("%010d", i)
				row[1] = fmt.Sprintf("%05d", i%99999)
				row[2] = []string{"North", "South", "East", "West"}[i%4]
				row[3] = strconv.Itoa(i%5000) + "." + fmt.Sprintf("%02d", i%100)
				row[4] = fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28)
				row[5] = strconv.Itoa(i % 10)
				row[6] = "a note of some length, row " + strconv.Itoa(i)
				row[7] = []string{"true", "false"}[i%2]
				if err := yield(row, kinds); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}}
	var f *catalog.File
	var err error
	held := peakTables(t, e, func() {
		f, err = s.AddFile(context.Background(), NewFile{Filename: "wide.xlsx", TempPath: tempBytes(t, s, "the workbook"), Tables: []TableSource{src}})
	})
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if tb.RowCount != rows {
		t.Fatalf("stored %d rows, want %d", tb.RowCount, rows)
	}
	types := map[string]string{}
	for _, c := range tb.Columns {
		types[c.Key] = c.Type
	}
	t.Logf("types %v; DuckDB held at most %.1f MiB of tables", types, float64(held)/(1<<20))
	if held > 48<<20 {
		t.Errorf("DuckDB held %.1f MiB of tables while loading %d rows; at most 48 (about a row group of these)", float64(held)/(1<<20), rows)
	}
	var last string
	if err := s.db.QueryRowContext(context.Background(), `SELECT "id" FROM data.`+ducksql.Ident(tb.ID)+` ORDER BY rowid DESC LIMIT 1`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%010d", rows-1); last != want {
		t.Errorf("the last row's id is %q, want %q", last, want)
	}
}

// TestLoadCancelledWhileAppending: a call cancelled while DuckDB takes in
// its rows ends as cancelled, at the next batch, and leaves no table.
func TestLoadCancelledWhileAppending(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := s.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	tb := &catalog.Table{ID: "t_cancelled"}
	taken := 0
	err = s.appendTyped(ctx, conn, tb, `id VARCHAR, note VARCHAR`, `"c1" AS id, "c2" AS note`, 2, nil, func(yield func([]driver.Value) error) error {
		for i := range 200_000 {
			if i == 50_000 {
				cancel()
			}
			if err := yield([]driver.Value{strconv.Itoa(i), "a note long enough to be held apart"}); err != nil {
				return err
			}
			taken++
		}
		return nil
	})
	if code := datadesk.ErrorCode(err); code != datadesk.Timeout {
		t.Fatalf("got %v (%s), want a cancelled call", err, code)
	}
	if taken >= 200_000 {
		t.Errorf("every row was taken after the cancel")
	}
	if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	var tables int
	if err := s.db.QueryRowContext(context.Background(), `SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'data'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("%d tables left (%v)", tables, err)
	}
}
