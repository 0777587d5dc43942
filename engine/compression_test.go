package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"datadesk"
	"datadesk/engine/typing"
)

func TestCompressionFor(t *testing.T) {
	repeat := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		vals []string
		want string
	}{
		{"identifiers", repeat(1000, func(i int) string { return fmt.Sprintf("%08d", i) }), "fsst"},
		{"half distinct", repeat(1000, func(i int) string { return fmt.Sprint(i % 500) }), "fsst"},
		{"categories", repeat(1000, func(i int) string { return []string{"North", "South"}[i%2] }), "dictionary"},
		{"in between", repeat(1000, func(i int) string { return fmt.Sprint(i % 100) }), ""},
		{"too few to tell", repeat(minSampleRows-1, func(i int) string { return fmt.Sprint(i) }), ""},
		{"empties are not values", append(repeat(minSampleRows-1, func(i int) string { return fmt.Sprint(i) }), repeat(500, func(int) string { return "" })...), ""},
	} {
		if got := compressionFor(tc.vals); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTextCompressionLasts loads identifiers and categories, each stored
// with the compression its first values chose, and reads them back after
// the database is checkpointed and opened again.
func TestTextCompressionLasts(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, MemoryLimit: "256MB", MaxTempSize: "1GB"}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	owner := datadesk.NewID("u")
	s, release, err := e.Acquire(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	content := directFile([]directColumn{
		{"order_id", func(i int) string { return fmt.Sprintf("%010d", i) }, nil},
		{"region", func(i int) string { return []string{"North", "South", "East"}[i%3] }, nil},
	})
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{csvSourceOf(t, path, true)}})
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	before := allRows(t, s, &tb)
	if _, err := s.db.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.Query(`SELECT DISTINCT column_name, compression FROM pragma_storage_info(?) WHERE segment_type = 'VARCHAR' ORDER BY ALL`, "data."+tb.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var col, comp string
		if err := rows.Scan(&col, &comp); err != nil {
			t.Fatal(err)
		}
		got[col] += comp
	}
	rows.Close()
	if got["order_id"] != "FSST" || got["region"] != "Dictionary" {
		t.Errorf("compression %v, want order_id FSST and region Dictionary", got)
	}
	release()
	e.Close()

	e, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = acquire(t, e, owner)
	if after := allRows(t, s, &tb); after != before {
		t.Errorf("rows changed on reopening:\n%.200s\n%.200s", before, after)
	}
}

// TestCompressedColumnTypedLate: a column of whole numbers named as an
// identifier is stored as text with FSST; a decimal after the first rows
// makes it a number, which a column with a text compression cannot
// become in place, so the file is loaded again, staged.
func TestCompressedColumnTypedLate(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	content := directFile([]directColumn{{"code_id", func(i int) string { return fmt.Sprint(i) }, []string{"2.25"}}})
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	src := csvSourceOf(t, path, true)
	first := csvSourceOf(t, path, false).Rows
	plan, err := s.samplePlan(context.Background(), nil, src, directRead{first: first, width: 1}, []string{"code_id"})
	if err != nil {
		t.Fatal(err)
	}
	if plan[0].compression != "fsst" || plan[0].screen != screenDigits {
		t.Fatalf("plan %+v, want digits screened and fsst", plan[0])
	}
	src.Rows = first
	f, err := s.AddFile(context.Background(), NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tables[0].Columns[0]; c.Type != typing.TypeDecimal {
		t.Errorf("code_id: %s (%s), want decimal", c.Type, c.Reason)
	}
}
