package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// TestNoReservedNames stores a table whose columns are named like the
// engine's own (rowid, __row), with control characters, and differing only
// in case: every key is unique and none is an engine name, labels keep the
// names, and pages, queries and shown views keep file order.
func TestNoReservedNames(t *testing.T) {
	t.Parallel()
	header := []string{"rowid", "__row", "Name", "name", "a\x00b\x07", "ROWID"}
	keys := []string{"", "__row", "", "", "x\x00y", ""} // declared, as table JSON may
	const n = 120
	var rows [][]string
	for i := 0; i < n; i++ {
		// rowid and __row run against file order, as text and numbers.
		rows = append(rows, []string{fmt.Sprintf("r%03d", n-i), fmt.Sprint(n - i), fmt.Sprint(i), fmt.Sprint(i % 3), "v", fmt.Sprint(i % 2)})
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared keys %v", declared), func(t *testing.T) {
			src := rowsSource("names", header, rows)
			if declared {
				src.Keys = keys
			}
			f, err := s.AddFile(ctx, NewFile{Filename: "names.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
			if err != nil {
				t.Fatal(err)
			}
			tbl := f.Tables[0]
			seen := map[string]bool{}
			for i, c := range tbl.Columns {
				k := strings.ToLower(c.Key)
				if seen[k] || k == "rowid" || k == ducksql.RowKey || strings.ContainsAny(c.Key, "\x00\x07") {
					t.Errorf("column %d: key %q collides", i, c.Key)
				}
				seen[k] = true
				if want := typing.CleanLabel(header[i]); c.Label != want {
					t.Errorf("column %d: label %q, want %q", i, c.Label, want)
				}
			}
			for _, off := range []int64{0, 50, 110} {
				p, err := s.Rows(ctx, tbl.ID, catalog.PageRequest{Offset: off, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := fmt.Sprint(p.Rows[0][2]), fmt.Sprint(off); got != want || len(p.Rows) != 10 {
					t.Errorf("page at %d: first row %s of %d rows, want %s of 10", off, got, len(p.Rows), want)
				}
			}
			p, err := s.Rows(ctx, tbl.ID, catalog.PageRequest{Offset: 100, Limit: 5, Sort: tbl.Columns[0].Key, Direction: "desc"})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(p.Rows[0][0]); got != "r020" {
				t.Errorf("sorted page: got %s, want r020", got)
			}
			for _, q := range []catalog.Query{
				{FileID: tbl.ID, Limit: 3, Offset: 60},
				{FileID: tbl.ID, Limit: 3, Offset: 60, Filters: []catalog.Filter{{Column: tbl.Columns[1].Key, Op: "gte", Value: "0"}}},
			} {
				if got := fmt.Sprint(ask(t, s, q).Rows[0][2]); got != "60" {
					t.Errorf("query %+v: first row %s, want 60", q, got)
				}
			}
			// A shown view whose aggregates are named like the engine's own.
			plan, err := s.Plan(ctx, catalog.Query{FileID: tbl.ID, GroupBy: []string{tbl.Columns[3].Key},
				Aggregates: []catalog.Aggregate{{Op: "count", Name: "rowid"}, {Op: "count", Name: "__row"}}, Show: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(ctx, plan)
			if err != nil {
				t.Fatal(err)
			}
			v, err := s.Show(ctx, plan, res)
			if err != nil {
				t.Fatal(err)
			}
			vp, err := s.Rows(ctx, v.TableID, catalog.PageRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(vp.Rows); got != "[[0 40 40] [1 40 40] [2 40 40]]" {
				t.Errorf("view rows: got %s", got)
			}
			if l := vp.Columns[1].Label; l != "rowid" || vp.Columns[1].Key == "rowid" {
				t.Errorf("view column: key %q label %q, want a new key and the label rowid", vp.Columns[1].Key, l)
			}
		})
	}
}

// TestLabelsLoseInvisibleCharacters: a header with U+202E kept the bidi
// override in its label, so "gnp.exe" showed as "exe.png" to people and
// models. Labels lose every invisible format character but the joiners
// words and emoji need.
func TestLabelsLoseInvisibleCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"exe\u202egnp.":              "exegnp.",
		"price\u200b":                "price",
		"\ufeffid":                   "id",
		"soft\u00adhyphen":           "softhyphen",
		"hidden\U000E0041\U000E0042": "hidden",
		"iso\u2066late\u2069":        "isolate",
		"می\u200cخواهم":              "می\u200cخواهم",
		"👩\u200d💻 team":              "👩\u200d💻 team",
		" tab\tand space ":           "taband space",
	} {
		if got := typing.CleanLabel(in); got != want {
			t.Errorf("CleanLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
