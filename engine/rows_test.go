package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// TestDeepPagesEveryWay: a deep page is read another way than the first
// (the table's stored order, or the page's row ids sorted alone), and
// must hold the rows the plain statement's LIMIT and OFFSET give, in
// every order, with nulls and ties, filtered or not, and only the
// columns asked for.
func TestDeepPagesEveryWay(t *testing.T) {
	t.Parallel()
	const n = 3*ducksql.PageReach + 137
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	src := TableSource{Name: "deep", Header: []string{"id", "v", "code", "region"}, Rows: func(yield func([]string) error) (RowStats, error) {
		for i := range n {
			v := strconv.Itoa(i * 7919 % 1009)
			if i%23 == 0 {
				v = ""
			}
			code := strconv.Itoa(i * 31 % 5000)
			if i%5 == 0 {
				code = "A-" + code
			}
			if err := yield([]string{fmt.Sprintf("%06d", i), v, code, []string{"North", "South", "East"}[i%3]}); err != nil {
				return RowStats{}, err
			}
		}
		return RowStats{}, nil
	}}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "deep.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	tb := &f.Tables[0]
	filters := map[string][]catalog.Filter{
		"all":   nil,
		"north": {{Column: "region", Op: "eq", Value: "North"}},
		"v>=50": {{Column: "v", Op: "gte", Value: json.Number("50")}},
	}
	for fname, fs := range filters {
		for _, sort := range []string{"", "v", "code"} {
			for _, dir := range []string{"asc", "desc"} {
				if sort == "" && dir == "desc" {
					continue
				}
				for _, off := range []int64{0, ducksql.PageReach + 3, n / 2, n - ducksql.PageReach - 80, n/3 - 20} {
					req := catalog.PageRequest{Offset: off, Limit: 50, Sort: sort, Direction: dir, Filters: fs, Columns: []string{"code", "id"}}
					name := fmt.Sprintf("%s/sort=%s %s/offset=%d", fname, sort, dir, off)
					got, err := s.Rows(context.Background(), tb.ID, req)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want := plainPage(t, s, tb, req)
					if fmt.Sprint(got.Rows) != fmt.Sprint(want) {
						t.Errorf("%s: got %v,\nwant %v", name, got.Rows, want)
					}
					if len(got.Columns) != 2 || got.Columns[0].Key != "code" {
						t.Errorf("%s: columns %v, want code and id", name, got.Columns)
					}
				}
			}
		}
	}
	var orders int
	if err := s.db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE schema_name = ?`, ducksql.OrderSchema).Scan(&orders); err != nil || orders != 4 {
		t.Errorf("stored orders: %d (%v), want 4: v and code, each way", orders, err)
	}
	if err := s.DeleteFile(context.Background(), f.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE schema_name = ?`, ducksql.OrderSchema).Scan(&orders); err != nil || orders != 0 {
		t.Errorf("stored orders after the file's deletion: %d (%v), want none", orders, err)
	}
}

// plainPage is req's page as the hand-written statement reads it, the
// columns picked in Go.
func plainPage(t *testing.T, s *Store, tb *catalog.Table, req catalog.PageRequest) [][]any {
	t.Helper()
	p, err := catalog.PagePlanFor(tb, req)
	if err != nil {
		t.Fatal(err)
	}
	_, q, params := handWritten(p)
	rows, err := s.pageRows(context.Background(), tb, q, append(params, p.Limit, p.Offset))
	if err != nil {
		t.Fatal(err)
	}
	return p.Page(rows, 0).Rows
}

// handWritten are the statements a person would write for page p: its
// count, and its rows with every column sorted, skipped with OFFSET
// (its limit and offset bound after params).
func handWritten(p *catalog.PagePlan) (count, page string, params []any) {
	where, params := ducksql.Where(p.Conds, p.Search)
	order := "rowid"
	if p.Sort != nil {
		order = ducksql.Order(ducksql.Ident(p.Sort.Key), p.Sort.Ordering(), map[bool]string{false: "ASC", true: "DESC"}[p.Desc]) + ", rowid"
	}
	from := " FROM data." + ducksql.Ident(p.Table.ID) + where
	return "SELECT count(*)" + from, "SELECT *" + from + " ORDER BY " + order + " LIMIT ? OFFSET ?", params
}
