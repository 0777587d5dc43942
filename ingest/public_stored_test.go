package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/internal/testenv"
)

// TestPublicFilesStored uploads public files (testdata/public/README.md)
// as they are, with nothing said about where their table is, and compares
// each stored table with what a reference reader gives when told the rows
// the file's own documentation names and its marks of a missing value
// (pandas' skiprows/header/na_values): the header, the row count, the
// column types and every value.
func TestPublicFilesStored(t *testing.T) {
	t.Parallel()
	py := referencePython()
	if py == "" {
		testenv.Missing(t, "no python3 with openpyxl and xlrd")
	}
	for _, tc := range []struct {
		file, sheet  string
		opts         Options // a person's correction, when the file needs one
		header, last int     // rows, from 1, as the reference lists them; last 0: to the end
		na           string  // the reference's na_values
		types        []string
		notes        []string // each must be among the report's notes
	}{
		{file: "gdp.csv", header: 1, types: []string{"text", "text", "integer", "double"}},
		{file: "deaths.xlsx", sheet: "arts", header: 5, last: 15,
			types: []string{"text", "text", "integer", "boolean", "date", "date"}},
		{file: "deaths.xls", sheet: "other", header: 5, last: 15,
			types: []string{"text", "text", "integer", "boolean", "date", "date"}},
		{file: "missing-values.xlsx", header: 1, na: "NA", types: []string{"integer", "integer", "integer"},
			notes: []string{`x: "NA" in 1 cell: marks of a missing value, stored empty`}},
		{file: "missing-values.xls", header: 1, na: "NA", types: []string{"integer", "integer", "integer"},
			notes: []string{`y: "NA" in 1 cell: marks of a missing value, stored empty`}},
		{file: "skipping.xlsx", sheet: "two_blank_rows", header: 3, types: []string{"text", "text"}},
		{file: "skipping.xls", sheet: "two_blank_rows", header: 3, types: []string{"text", "text"}},
		// A title in row 1 over text columns is weak evidence: the reading
		// says so, and naming the header row corrects it.
		{file: "skipping.xlsx", sheet: "occupied_row_and_blank_row", header: 3, types: []string{"text", "text"},
			opts: Options{HeaderRows: []int{3}, Sheet: "occupied_row_and_blank_row"}},
		{file: "skipping.xls", sheet: "two_occupied_rows", header: 3, types: []string{"text", "text"},
			opts: Options{HeaderRows: []int{3}, Sheet: "two_occupied_rows"}},
	} {
		t.Run(tc.file+"/"+tc.sheet, func(t *testing.T) {
			path := filepath.Join("testdata", "public", tc.file)
			out, err := exec.Command(py, filepath.Join("testdata", "refstored.py"), path, tc.sheet,
				strconv.Itoa(tc.header), strconv.Itoa(tc.last), tc.na).Output()
			if err != nil {
				t.Fatal(err)
			}
			var ref struct {
				Header []string    `json:"header"`
				Rows   [][]*string `json:"rows"`
			}
			if err := json.Unmarshal(out, &ref); err != nil {
				t.Fatal(err)
			}
			fx := newFixture(t)
			f, err := fx.ingestWith(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tbl := tableNamed(f, tc.sheet)
			if tbl == nil {
				t.Fatalf("no table %q in %v", tc.sheet, f.Tables)
			}
			var labels, types []string
			for _, c := range tbl.Columns {
				labels = append(labels, c.Label)
				types = append(types, c.Type)
			}
			if got, want := strings.Join(labels, "|"), strings.Join(ref.Header, "|"); got != want {
				t.Errorf("header %q, want %q", got, want)
			}
			if fmt.Sprint(types) != fmt.Sprint(tc.types) {
				t.Errorf("types %v, want %v", types, tc.types)
			}
			for _, n := range tc.notes {
				if !strings.Contains(strings.Join(tbl.Report.Notes, "\n"), n) {
					t.Errorf("no note %q in %q", n, tbl.Report.Notes)
				}
			}
			rows := fx.allRows(tbl.ID)
			if len(rows) != len(ref.Rows) {
				t.Fatalf("%d rows, the reference %d", len(rows), len(ref.Rows))
			}
			bad := 0
			for r, row := range rows {
				for c, v := range row {
					var want *string
					if c < len(ref.Rows[r]) {
						want = ref.Rows[r][c]
					}
					if !sameAsReference(want, v) && bad < 10 {
						bad++
						t.Errorf("row %d %s: %#v, the reference %v", r+1, tbl.Columns[c].Key, v, deref(want))
					}
				}
			}
		})
	}
}

// TestPublicTitleIsUncertain: a one-cell title over a table of text is
// weak evidence; the reading keeps its first row as the header and says
// it was not certain, naming the way to correct it.
func TestPublicTitleIsUncertain(t *testing.T) {
	fx := newFixture(t)
	f, err := fx.ingestWith(filepath.Join("testdata", "public", "skipping.xlsx"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableNamed(f, "occupied_row_and_blank_row")
	if tbl == nil || !strings.Contains(strings.Join(tbl.Report.Notes, "\n"), "the header was not certain") ||
		!strings.Contains(strings.Join(tbl.Report.Notes, "\n"), "header_row") {
		t.Fatalf("notes %q", tbl.Report.Notes)
	}
}

func (fx *fixture) ingestWith(path string, opts Options) (*catalog.File, error) {
	name := filepath.Base(path)
	tmp := filepath.Join(fx.store.IncomingDir(), datadesk.NewID("up"))
	b, err := os.ReadFile(path)
	if err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		fx.t.Fatal(err)
	}
	res, err := fx.in.ReadWith(context.Background(), tmp, name, fx.store.IncomingDir(), opts)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	defer res.Close()
	return fx.store.AddFile(context.Background(), engine.NewFile{Filename: name, ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
}

func (fx *fixture) allRows(tableID string) [][]any {
	var all [][]any
	for {
		p, err := fx.store.Rows(context.Background(), tableID, catalog.PageRequest{Offset: int64(len(all)), Limit: catalog.MaxPageSize})
		if err != nil {
			fx.t.Fatal(err)
		}
		all = append(all, p.Rows...)
		if len(p.Rows) < catalog.MaxPageSize {
			return all
		}
	}
}

func tableNamed(f *catalog.File, sheet string) *catalog.Table {
	for i := range f.Tables {
		if sheet == "" || f.Tables[i].Name == sheet {
			return &f.Tables[i]
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// sameAsReference compares a stored value with the reference's cell.
func sameAsReference(ref *string, v any) bool {
	if ref == nil {
		return v == nil
	}
	kind, text, _ := strings.Cut(*ref, ":")
	switch kind {
	case "n":
		want, _ := strconv.ParseFloat(text, 64)
		switch x := v.(type) {
		case int64:
			return float64(x) == want
		case float64:
			return x == want
		case string: // a number kept as text, e.g. an identifier
			got, err := strconv.ParseFloat(x, 64)
			return err == nil && got == want
		case fmt.Stringer: // a decimal, as its digits
			got, err := strconv.ParseFloat(x.String(), 64)
			return err == nil && got == want
		}
		return false
	case "d":
		if tm, ok := v.(time.Time); ok {
			return tm.Format("2006-01-02") == text
		}
		return v == text
	case "b":
		b, ok := v.(bool)
		return ok && b == (text == "TRUE")
	case "s":
		// A year and a month, stored as the month's first day.
		if tm, ok := v.(time.Time); ok && len(text) == 7 {
			return tm.Format("2006-01-02") == text+"-01"
		}
		if d, ok := v.(string); ok && len(text) == 7 && len(d) == 10 {
			return d == text+"-01"
		}
	}
	return fmt.Sprint(v) == text
}
