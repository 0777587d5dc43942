package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// kindLetters name cell kinds in test output.
var kindLetters = map[typing.CellKind]string{
	typing.KindText: "s", typing.KindNumber: "n", typing.KindDate: "d", typing.KindDateTime: "dt",
	typing.KindTime: "t", typing.KindBool: "b", typing.KindError: "e",
}

// sheetDump is a sheet as ingest reads it: its name, header, and every
// data row's cells as kind:text.
type sheetDump struct {
	name   string
	header []string
	rows   [][]string
	// skipped are the rows kept out of the table, above and below.
	skipped []catalog.SkippedRow
	// sheet, headerRows and nums are the table's sheet, the rows its
	// header is made of and each data row's number in the sheet.
	sheet      string
	headerRows []int
	nums       []int64
}

// dumpWorkbook reads a spreadsheet through ingest without storing it.
func dumpWorkbook(t *testing.T, in *Ingester, path string) ([]sheetDump, error) {
	t.Helper()
	res, err := in.Read(context.Background(), path, filepath.Base(path), t.TempDir())
	if err != nil {
		return nil, err
	}
	defer res.Close()
	var out []sheetDump
	for _, src := range res.Tables {
		d := sheetDump{name: src.Name, header: src.Header, skipped: src.Skipped, sheet: src.Sheet, headerRows: src.HeaderRows}
		stats, err := src.Cells(func(row []string, kinds []typing.CellKind) error {
			cells := make([]string, len(row))
			for i, v := range row {
				if i < len(kinds) && kinds[i] != typing.KindEmpty {
					cells[i] = kindLetters[kinds[i]] + ":" + v
				}
			}
			for len(cells) > 0 && cells[len(cells)-1] == "" {
				cells = cells[:len(cells)-1]
			}
			d.rows = append(d.rows, cells)
			return nil
		})
		if err != nil {
			return nil, err
		}
		d.skipped = append(d.skipped, stats.Skipped...)
		for i := range d.rows {
			d.nums = append(d.nums, stats.Rows.Row(int64(i)))
		}
		out = append(out, d)
	}
	return out, nil
}

// TestTwins reads every workbook of the corpus that is saved in more than
// one format (LONumbers.xls and LONumbers.xlsx, number_format.xls and
// .xlsm, ...) and requires the same cells, kind and value, sheet by sheet.
func TestTwins(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sheetjsDir(), "*.xls*"))
	if len(files) == 0 {
		t.Fatalf("no corpus in %s", sheetjsDir())
	}
	byBase := map[string][]string{}
	for _, p := range files {
		base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		byBase[base] = append(byBase[base], p)
	}
	var bases []string
	for b, ps := range byBase {
		if len(ps) > 1 {
			bases = append(bases, b)
		}
	}
	sort.Strings(bases)
	in := testIngester()
	for _, b := range bases {
		t.Run(b, func(t *testing.T) {
			ps := byBase[b]
			want, wantErr := dumpWorkbook(t, in, ps[0])
			for _, p := range ps[1:] {
				got, gotErr := dumpWorkbook(t, in, p)
				if wantErr != nil || gotErr != nil {
					if datadesk.ErrorCode(wantErr) != datadesk.ErrorCode(gotErr) {
						t.Errorf("%s: %v; %s: %v", filepath.Base(ps[0]), wantErr, filepath.Base(p), gotErr)
					}
					continue
				}
				if diff := diffSheets(b, want, got, func(x, y string) bool { return x == y }); diff != "" {
					t.Errorf("%s and %s differ:\n%s", filepath.Base(ps[0]), filepath.Base(p), diff)
				}
			}
		})
	}
}

func sameRow(a, b []string, same func(x, y string) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}

// twinExceptions are the rows where twins hold different bytes, keyed by
// workbook, sheet and data row (0 is the header), with why.
var twinExceptions = map[string]string{
	"LONumbers|Sheet1|37":           "the XLSX twin stores empty strings where the XLS has negative times",
	"comments_stress_test|Sheet3|0": "line breaks are CR in the XLSX twin and LF in the XLS",
	"comments_stress_test|Sheet3|2": "line breaks are CR in the XLSX twin and LF in the XLS",
	"formula_stress_test|Date|5":    "NOW(), recalculated when each twin was saved",
	"formula_stress_test|Date|6":    "TODAY(), recalculated when each twin was saved",
	"formula_stress_test|Math|45":   "RAND(), recalculated when each twin was saved",
	"formula_stress_test|Math|46":   "RANDBETWEEN(), recalculated when each twin was saved",
	// Beside a reference reader.
	"xlsx-stream-d-date-cell.xls|Sheet1|9": "[h]:mm:ss is an elapsed time, a number; xlrd makes it a date",
	"number_format.xls|Implied|25":         "[h]:mm:ss is an elapsed time, a number; xlrd makes it a date",
	"number_format.xls|2011|45":            "[h]:mm:ss is an elapsed time, a number; xlrd makes it a date",
	"number_format_russian.xls|Implied|25": "[h]:mm:ss is an elapsed time, a number; xlrd makes it a date",
	"number_format_russian.xls|2011|45":    "[h]:mm:ss is an elapsed time, a number; xlrd makes it a date",
}

// diffSheets lists the cells two readings of workbook base disagree on,
// leaving out the known exceptions.
func diffSheets(base string, a, b []sheetDump, same func(x, y string) bool) string {
	var out strings.Builder
	if len(a) != len(b) {
		fmt.Fprintf(&out, "%d sheets, %d sheets\n", len(a), len(b))
	}
	for i := 0; i < min(len(a), len(b)); i++ {
		x, y := a[i], b[i]
		if x.name != y.name {
			fmt.Fprintf(&out, "sheet %d: %q, %q\n", i, x.name, y.name)
		}
		skip := func(row int) bool { return twinExceptions[fmt.Sprintf("%s|%s|%d", base, x.name, row)] != "" }
		if !sameRow(x.header, y.header, same) && !skip(0) {
			fmt.Fprintf(&out, "%s header: %q, %q\n", x.name, x.header, y.header)
		}
		if len(x.rows) != len(y.rows) {
			fmt.Fprintf(&out, "%s: %d rows, %d rows\n", x.name, len(x.rows), len(y.rows))
		}
		for r := 0; r < min(len(x.rows), len(y.rows)); r++ {
			if skip(r + 1) {
				continue
			}
			xr, yr := x.rows[r], y.rows[r]
			for c := 0; c < max(len(xr), len(yr)); c++ {
				var xc, yc string
				if c < len(xr) {
					xc = xr[c]
				}
				if c < len(yr) {
					yc = yr[c]
				}
				if !same(xc, yc) {
					fmt.Fprintf(&out, "%s row %d col %d: %q, %q\n", x.name, r+1, c+1, xc, yc)
				}
			}
		}
	}
	return out.String()
}

// goldenRows is how many rows of a sheet a golden file shows; a digest of
// every row covers the rest.
const goldenRows = 60

// TestSingles keeps golden readings of the corpus workbooks that have no
// twin to be compared with: each sheet's header, first rows (kind:text)
// and a digest of all rows. Rewrite with -update.
func TestSingles(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(sheetjsDir(), "*.xls*"))
	if len(files) == 0 {
		t.Fatalf("no corpus in %s", sheetjsDir())
	}
	count := map[string]int{}
	for _, p := range files {
		count[strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))]++
	}
	in := testIngester()
	for _, p := range files {
		name := filepath.Base(p)
		if count[strings.TrimSuffix(name, filepath.Ext(name))] > 1 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			sheets, err := dumpWorkbook(t, in, p)
			if err != nil {
				fmt.Fprintf(&b, "refused %s: %s\n", datadesk.ErrorCode(err), datadesk.AsError(err).Message)
			}
			for _, s := range sheets {
				h := sha256.New()
				for _, r := range s.rows {
					fmt.Fprintf(h, "%q\n", r)
				}
				fmt.Fprintf(&b, "sheet %q: %d rows, sha256 %x\nheader %q\n", s.name, len(s.rows), h.Sum(nil), s.header)
				for i, r := range s.rows[:min(len(s.rows), goldenRows)] {
					fmt.Fprintf(&b, "%d %q\n", i+1, r)
				}
			}
			golden := filepath.Join("testdata", "singles", name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs from %s (run with -update to accept):\n%s", name, golden, diffLines(string(want), b.String()))
			}
		})
	}
}
