package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

// A text column of numbers beside a label, a unit and written forms, as
// a sheet read with its header rows as data holds it.
var textNumbers = []string{"Price", "£", "9927.77", "10500", "250000", "1.", ".5", "+3", "-2.5", "1e5", "1,234", "", "%"}

// addTextNumbers stores textNumbers as the column price of a table.
func addTextNumbers(t *testing.T, s *Store) *catalog.File {
	t.Helper()
	var cells [][]string
	for i, v := range textNumbers {
		cells = append(cells, []string{v, string(rune('a' + i))})
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "prices.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("prices", []string{"price", "tag"}, cells)}})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tables[0].Columns[0]; c.Type != "text" || c.Identifier {
		t.Fatalf("price is %s, identifier %v; want text", c.Type, c.Identifier)
	}
	return f
}

// TestTextAsNumbers: comparisons with numbers on a text column read its
// values that are numbers as numbers, in the statement DuckDB runs, and
// the values that are not are counted and shown.
func TestTextAsNumbers(t *testing.T) {
	t.Parallel()
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	checkTextAsNumbers(t, s, addTextNumbers(t, s))
}

// checkTextAsNumbers asks comparisons of price in f's table and checks
// the rows they match and the note on the values that are not numbers.
func checkTextAsNumbers(t *testing.T, s *Store, f *catalog.File) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		op    string
		value any
		tags  string
	}{
		{"gt", json.Number("100000"), "e"},
		{"gte", "9927.77", "cde"},
		{"lt", json.Number("0"), "i"},
		{"between", []any{json.Number("1000"), "20000"}, "cd"},
	} {
		q := catalog.Query{FileID: f.ID, Filters: []catalog.Filter{{Column: "price", Op: c.op, Value: c.value}}, Columns: []string{"tag"}, Limit: 20}
		p, err := s.Plan(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		notes, err := s.CheckTextUses(ctx, p.TextUses())
		if err != nil {
			t.Fatal(err)
		}
		want := `filters[0]: "price" is text, so ` + c.op + ` compared its values that are numbers, as numbers; 8 of its 12 values are not numbers ("%", "+3", ".5", ...) and match no number; the import found 8 of 12 values are not numbers`
		if len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
			t.Errorf("%s %v: notes %q, want one starting %q", c.op, c.value, notes, want)
		}
		res, err := s.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var tags []string
		for _, r := range res.Rows {
			tags = append(tags, r[0].(string))
		}
		if got := strings.Join(tags, ""); got != c.tags {
			t.Errorf("%s %v: matched %s, want %s\nsql %s", c.op, c.value, got, c.tags, res.SQL)
		}
	}
}

// TestClickHouseTextAsNumbers: the same comparisons and counts of a
// table on the cluster.
func TestClickHouseTextAsNumbers(t *testing.T) {
	ch := testClickHouse(t)
	s := acquire(t, newClusterEngine(t, ch, 0), datadesk.NewID("u"))
	f := addTextNumbers(t, s)
	if _, err := s.MoveTable(context.Background(), f.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}
	checkTextAsNumbers(t, s, f)
}
