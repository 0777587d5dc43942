package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// countedSource is a counted table of a whole-number column and a text
// column, as files.create gives one: with typed, its whole numbers are
// given read already.
func countedSource(name string, text [][]string, typed [][]any, withTyped bool) TableSource {
	counted := make([]typing.Stats, 2)
	for r, row := range text {
		for i, cell := range row {
			if typed[r][i] != nil {
				counted[i].Add(cell)
			}
		}
	}
	src := TableSource{Name: name, Header: []string{"n", "note"}, Counted: counted,
		Hints: []typing.Hint{{Type: typing.TypeInteger}, {Type: typing.TypeText}},
		RowsWithNulls: func(yield func([]string, []bool) error) (RowStats, error) {
			for r, row := range text {
				if err := yield(row, []bool{typed[r][0] == nil, typed[r][1] == nil}); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}}
	if withTyped {
		src.Typed = func(yield func([]string, []any) error) (RowStats, error) {
			for r, row := range text {
				if err := yield(row, typed[r]); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}
	}
	return src
}

// TestCountedWholeNumbers: whole numbers given as int64 (or as text that
// reads as one) make the same table as their text cast in SQL: BIGINT's
// extremes, empty cells, padded values, and empty text kept apart from an
// empty cell. A value that is not the whole number its column says is
// refused, naming its row and column, and nothing is stored.
func TestCountedWholeNumbers(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	text := [][]string{{"9223372036854775807", "a"}, {"-9223372036854775808", ""}, {"", ""}, {" 42 ", "  padded  "}, {"0", "x"}}
	typed := [][]any{{int64(math.MaxInt64), "a"}, {int64(math.MinInt64), ""}, {nil, nil}, {" 42 ", "  padded  "}, {int64(0), "x"}}
	f, err := s.AddFile(ctx, NewFile{Filename: "n.csv", TempPath: tempBytes(t, s, "n"), Tables: []TableSource{
		countedSource("typed", text, typed, true), countedSource("text", text, typed, false)}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := ducksql.Ident(f.Tables[0].ID), ducksql.Ident(f.Tables[1].ID)
	var diff int
	var types, emptyText string
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT * FROM data.`+a+` EXCEPT ALL SELECT * FROM data.`+b+`))
		+ (SELECT count(*) FROM (SELECT * FROM data.`+b+` EXCEPT ALL SELECT * FROM data.`+a+`)),
		(SELECT string_agg(typeof(n) || '/' || typeof(note), ',') FROM (SELECT * FROM data.`+a+` LIMIT 1)),
		(SELECT string_agg(coalesce(note, 'NULL'), '|' ORDER BY n NULLS LAST) FROM data.`+a+`)`).Scan(&diff, &types, &emptyText); err != nil {
		t.Fatal(err)
	}
	if diff != 0 {
		t.Errorf("the typed and text loads differ in %d rows", diff)
	}
	if types != "BIGINT/VARCHAR" {
		t.Errorf("column types %s, want BIGINT/VARCHAR", types)
	}
	if emptyText != "|x|padded|a|NULL" {
		t.Errorf("notes in order %q, want %q", emptyText, "|x|padded|a|NULL")
	}
	var sum float64
	if err := s.db.QueryRowContext(ctx, `SELECT sum(n::HUGEINT)::DOUBLE FROM data.`+a).Scan(&sum); err != nil || sum != 41 {
		t.Errorf("sum %v (%v), want 41", sum, err)
	}

	bad := [][]any{{int64(1), "a"}, {"4.5", "b"}}
	_, err = s.AddFile(ctx, NewFile{Filename: "bad.csv", TempPath: tempBytes(t, s, "bad"), Tables: []TableSource{
		countedSource("bad", [][]string{{"1", "a"}, {"4.5", "b"}}, bad, true)}})
	if err == nil || !strings.Contains(err.Error(), "row 2, column 1") {
		t.Fatalf("got %v, want the row and column of 4.5", err)
	}
	files, err := s.Files(ctx, "", 0)
	if err != nil || len(files) != 1 {
		t.Errorf("%d files stored (%v), want only the first", len(files), err)
	}
}
