package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestStreamMatchesPages: streaming a filtered, searched, sorted plan gives
// exactly the rows the browsing pages show, in the same order, and as many
// as the plan counts.
func TestStreamMatchesPages(t *testing.T) {
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	var rows [][]string
	regions := []string{"North", "south", "East", ""}
	for i := 0; i < 300; i++ {
		rows = append(rows, []string{fmt.Sprintf("%04d", i), regions[i%4], strconv.Itoa(i * 7 % 101), fmt.Sprintf("note %d", i%9)})
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "x.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("x", []string{"id", "region", "amount", "note"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	tid := f.Tables[0].ID
	filters := []catalog.Filter{{Column: "amount", Op: "gte", Value: json.Number("20")}}
	tests := []struct {
		name   string
		search string
		sort   string
		dir    string
	}{
		{"filtered", "", "", ""},
		{"searched and sorted", "OUTH", "amount", "desc"},
		{"search in any text column", "note 3", "region", "asc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := s.Rows(context.Background(), tid, catalog.PageRequest{Limit: catalog.MaxPageSize, Filters: filters, Search: tc.search, Sort: tc.sort, Direction: tc.dir})
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Plan(context.Background(), catalog.Query{FileID: tid, Filters: filters, Search: tc.search, SortBy: tc.sort, Direction: tc.dir})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]any
			if err := s.Stream(context.Background(), p, func(r []any) error {
				out := make([]any, len(r))
				for i, v := range r {
					out[i] = JSONValue(v, page.Columns[i].Type)
				}
				got = append(got, out)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if res.MatchedRowCount != page.Total || int64(len(got)) != page.Total || page.Total == 0 {
				t.Fatalf("counted %d, streamed %d, page total %d", res.MatchedRowCount, len(got), page.Total)
			}
			if fmt.Sprint(got) != fmt.Sprint(page.Rows) {
				t.Errorf("streamed rows differ from the page:\n got %v\nwant %v", got[:3], page.Rows[:3])
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	f, err := s.AddFile(context.Background(), NewFile{Filename: "n.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("n", []string{"a"}, [][]string{{"1"}, {"2"}})}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Rows(context.Background(), f.Tables[0].ID, catalog.PageRequest{Search: "x"})
	if e := datadesk.AsError(err); e.Code != datadesk.Invalid || e.Field != "search" {
		t.Errorf("search of a table without text: %v", err)
	}
	p, err := s.Plan(context.Background(), catalog.Query{FileID: f.Tables[0].ID, GroupBy: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stream(context.Background(), p, func([]any) error { return nil }); datadesk.ErrorCode(err) != datadesk.Invalid {
		t.Errorf("stream of a grouped plan: %v", err)
	}
}
