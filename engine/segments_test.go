package engine

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
	"datadesk/engine/ducksql"
)

// segmentsOf counts the data segments of each column of table (a
// qualified name) as pragma_storage_info shows them.
func segmentsOf(t *testing.T, db *sql.DB, table string) map[string]int64 {
	t.Helper()
	rows, err := db.Query(`SELECT column_name, count(*) FROM pragma_storage_info(?)
		WHERE segment_type <> 'VALIDITY' GROUP BY ALL`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoredAsACopy: an uploaded 600,000-row table had the row groups of a
// CREATE TABLE AS copy made by another DuckDB but four times its segments
// (blocks of 64 KiB, where a segment never spans blocks), and a contains
// filter over it took 2.3 times as long. A table the server stores now
// has, column by column, the segments of such a copy.
func TestStoredAsACopy(t *testing.T) {
	dir := t.TempDir()
	e, err := New(Config{Dir: dir, MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	owner := datadesk.NewID("u")
	s, release, err := e.Acquire(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	text.WriteString("order_id,customer,amount\n")
	const rows = 250_000 // three row groups
	for i := range rows {
		fmt.Fprintf(&text, "%08d,Acme Corp %d,%d.%02d\n", i, (i*7919)%1800, (i*37)%5000, i%100)
	}
	path := filepath.Join(t.TempDir(), "orders.csv")
	if err := os.WriteFile(path, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src := csvSourceOf(t, path, false)
	src.CSV = &CSVFile{Path: path, Delimiter: ','}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "orders.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
	release()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Another DuckDB of its own defaults reads the file with the server
	// stopped and copies the table into a database of its own.
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	for _, q := range []string{
		`ATTACH ` + ducksql.Literal(filepath.Join(e.OwnerDir(owner), "owner.duckdb")) + ` AS stored (READ_ONLY)`,
		`ATTACH ` + ducksql.Literal(filepath.Join(t.TempDir(), "copy.duckdb")) + ` AS copied`,
		`CREATE TABLE copied.t AS SELECT * FROM stored.data.` + ducksql.Ident(f.Tables[0].ID),
		`CHECKPOINT copied`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	stored, copied := segmentsOf(t, db, "stored.data."+ducksql.Ident(f.Tables[0].ID)), segmentsOf(t, db, "copied.t")
	t.Logf("stored %v, copy %v", stored, copied)
	if !maps.Equal(stored, copied) {
		t.Errorf("segments per column: got %v, want the copy's %v", stored, copied)
	}
}
