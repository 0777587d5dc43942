package engine

import (
	"fmt"
	"testing"

	"datadesk/engine/typing"
)

// TestFirstWay: where each kind of source starts loading, in one place.
func TestFirstWay(t *testing.T) {
	rows := func(yield func([]string) error) (RowStats, error) { return RowStats{}, nil }
	wide := make([]string, directWidth+1)
	cases := []struct {
		name   string
		src    TableSource
		staged bool
		want   loadWay
	}{
		{"declared types", TableSource{Header: []string{"a"}, Counted: []typing.Stats{{}}}, false, appendDeclared{}},
		{"declared types, wide", TableSource{Header: wide, Rows: rows, Counted: make([]typing.Stats, len(wide))}, false, appendDeclared{}},
		{"CSV", TableSource{Header: []string{"a"}, Rows: rows, CSV: &CSVFile{}}, false, readTyped{}},
		{"JSON", TableSource{Header: []string{"a"}, JSON: &JSONFile{}}, false, readTyped{}},
		{"CSV, reading as text asked for", TableSource{Header: []string{"a"}, Rows: rows, CSV: &CSVFile{}}, true, readAsText{}},
		{"wide CSV", TableSource{Header: wide, Rows: rows, CSV: &CSVFile{}}, false, streamRows{}},
		{"spreadsheet rows", TableSource{Header: []string{"a"}, Rows: rows}, false, streamRows{}},
	}
	for _, c := range cases {
		s := &Store{staged: c.staged}
		if got := s.firstWay(c.src); fmt.Sprintf("%T", got) != fmt.Sprintf("%T", c.want) {
			t.Errorf("%s: starts with %T, want %T", c.name, got, c.want)
		}
	}
}
