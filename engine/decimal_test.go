package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// TestWideDecimalsKeepScale: numbers whose whole and decimal digits
// together pass 18 are stored as DECIMAL(38,s), not double, so 1.50 keeps
// its places and every value reads back exactly; sums stay exact too.
func TestWideDecimalsKeepScale(t *testing.T) {
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	vals := []string{"123456789012345", "1.50", "-0.0", "0.0000125", "-98765.4321"}
	var rows [][]string
	for _, v := range vals {
		rows = append(rows, []string{v})
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "w.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("w", []string{"amount"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := f.Tables[0]
	if tbl.Columns[0].Type != typing.TypeDecimal {
		t.Fatalf("type %s (%s), want decimal", tbl.Columns[0].Type, tbl.Columns[0].Reason)
	}
	var got []string
	if _, err := s.Scan(context.Background(), tbl.ID, func(r []any) error {
		got = append(got, fmt.Sprint(r[0]))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := "[123456789012345.0000000 1.5000000 0.0000000 0.0000125 -98765.4321000]"
	if fmt.Sprint(got) != want {
		t.Errorf("scanned %v, want %s", got, want)
	}
	p, err := s.Plan(context.Background(), catalog.Query{FileID: tbl.ID, Aggregates: []catalog.Aggregate{{Op: "sum", Column: "amount"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if sum := res.Aggregates["sum_amount"]; sum != json.Number("123456788913581.0679125") {
		t.Errorf("sum %v (%T), want 123456788913581.0679125", sum, sum)
	}
}
