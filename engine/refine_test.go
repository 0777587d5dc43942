package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// TestNumbersAmongMarks: public statistics write doubles in full
// (2813571753.8725324) and mark missing values with "..", "-" or "n/a";
// either made a whole column of numbers text. Such a column is numeric
// now, its marks empty and counted in the report, on every load path;
// codes stay text.
func TestNumbersAmongMarks(t *testing.T) {
	t.Parallel()
	file := strings.Join([]string{
		"country,gdp,pop,share,card,cc,label",
		"A,2813571753.8725324,1200,0.1,1234567890123456789,NA,x1",
		"B,..,n/a,0.25,1234567890123456780,DE,..",
		"C,9958200000.0,-,0.10000000000000001,1234567890123456781,FR,x3",
		"D,99.99,3400,12.5,1234567890123456782,NA,x4",
		"E,-0.30000000000000004,5600,1.5,1234567890123456783,IT,x5",
	}, "\n") + "\n"
	want := map[string]struct {
		typ    string
		reason string
	}{
		"gdp":   {typing.TypeDouble, "each the shortest text of a double"},
		"pop":   {typing.TypeInteger, `2 cells marked as missing`},
		"share": {typing.TypeDecimal, "not the shortest text of a double (0.10000000000000001)"},
		"card":  {typing.TypeText, "more than 15 significant digits"},
		"cc":    {typing.TypeText, ""},
		"label": {typing.TypeText, ""},
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	both := csvSourceOf(t, path, false)
	both.CSV = &CSVFile{Path: path, Delimiter: ','}
	for name, src := range map[string]TableSource{"duckdb": csvSourceOf(t, path, true), "go": csvSourceOf(t, path, false), "direct": both} {
		t.Run(name, func(t *testing.T) {
			f, err := s.AddFile(context.Background(), NewFile{Filename: "gdp.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
			if err != nil {
				t.Fatal(err)
			}
			tb := f.Tables[0]
			for _, c := range tb.Columns {
				w, ok := want[c.Key]
				if !ok {
					continue
				}
				if c.Type != w.typ || !strings.Contains(c.Reason, w.reason) {
					t.Errorf("%s: %s (%s), want %s (%s)", c.Key, c.Type, c.Reason, w.typ, w.reason)
				}
			}
			notes := strings.Join(tb.Report.Notes, "\n")
			for _, n := range []string{`gdp: ".." in 1 cell`, `pop: "-" in 1 cell, "n/a" in 1 cell`} {
				if !strings.Contains(notes, n) {
					t.Errorf("the report lacks %q: %s", n, notes)
				}
			}
			page, err := s.Rows(context.Background(), tb.ID, catalog.PageRequest{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got := [][]any{}
			for _, r := range page.Rows {
				got = append(got, []any{r[1], r[2]})
			}
			wantRows := [][]any{{2813571753.8725324, int64(1200)}, {nil, nil}, {9958200000.0, nil}, {99.99, int64(3400)}, {-0.30000000000000004, int64(5600)}}
			for i := range wantRows {
				for j := range wantRows[i] {
					if got[i][j] != wantRows[i][j] {
						t.Errorf("row %d, column %d: %#v, want %#v", i+1, j+2, got[i][j], wantRows[i][j])
					}
				}
			}
		})
	}
}
