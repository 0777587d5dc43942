package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/internal/testenv"
)

// TestMoveInOnFullDisk: a table moved to DuckDB on a full disk is refused
// with a 503 that says the disk is full; the table stays on the cluster,
// answering with every row, no partial copy is left, and once space is
// freed the same move succeeds.
func TestMoveInOnFullDisk(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	mnt := testenv.SmallDisk(t, 96<<20)
	e, err := New(Config{Dir: mnt, MemoryLimit: "256MB", MaxTempSize: "16MB", Remote: ch, RetireAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	s := acquire(t, e, datadesk.NewID("u"))
	rows := make([][]string, 300_000)
	for i := range rows {
		rows[i] = []string{fmt.Sprint(i), fmt.Sprintf("customer %d with a longer name", i), fmt.Sprintf("%d.%02d", i%1000, i%100)}
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "t", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{rowsSource("t", []string{"id", "customer", "amount"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	id := f.Tables[0].ID
	if _, err := s.MoveTable(ctx, id, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}
	// The DuckDB copy's sweep, which frees its space.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var moves int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM dd_moves WHERE table_id = ? AND location = ?`, id, catalog.LocationDuckDB).Scan(&moves); err != nil {
			t.Fatal(err)
		}
		if moves == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the DuckDB copy of %s not swept within a minute", id)
		}
	}
	freeSpace := testenv.Fill(t, mnt, 512<<10)

	_, err = s.MoveTable(ctx, id, catalog.LocationDuckDB)
	if e := datadesk.AsError(err); err == nil || e.Code != datadesk.Unavailable || !strings.Contains(e.Message, "disk is full") {
		t.Fatalf("a move to DuckDB on a full disk: %v, want unavailable saying the disk is full", err)
	}
	count := func(where string) {
		t.Helper()
		tb, err := s.Table(ctx, id)
		if err != nil || tb.Location != where {
			t.Fatalf("the table after the move: %v %v, want it on %s", tb, err, where)
		}
		p, err := s.Plan(ctx, catalog.Query{FileID: id})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(ctx, p)
		if err != nil || res.MatchedRowCount != int64(len(rows)) {
			t.Fatalf("the table on %s: %v, %v; want %d rows", where, res, err, len(rows))
		}
	}
	count(catalog.LocationClickHouse)
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '%__in'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("partial copies left: %d (%v)", left, err)
	}

	freeSpace()
	if _, err := s.MoveTable(ctx, id, catalog.LocationDuckDB); err != nil {
		t.Fatalf("the move once space is freed: %v", err)
	}
	count(catalog.LocationDuckDB)
}
