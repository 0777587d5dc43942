package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"

	"datadesk"
	"datadesk/engine"
)

// TestWorkbookStreamPreferred: a file with both a BIFF8 "Workbook" stream
// and a BIFF5 "Book" stream (ABBYY FineReader writes both; this one is
// calamine's tests/biff5-rich-text-string.xls) is read from the BIFF8
// one, as xlrd reads it: the BIFF5 copy's code page has no '■' and holds
// '?' instead.
func TestWorkbookStreamPreferred(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "biff5-rich-text-string.xls")
	ours, err := dumpWorkbook(t, literalIngester(), path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ours[0].rows[0][7], "s:ri ■ s g •rM S ’"; got != want {
		t.Errorf("cell H2 %q, want %q", got, want)
	}
	py := referencePython()
	if py == "" {
		return
	}
	out, err := exec.Command(py, filepath.Join("testdata", "refcells.py"), path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var refs map[string][]struct {
		Rows [][]string `json:"rows"`
	}
	if err := json.Unmarshal(out, &refs); err != nil {
		t.Fatal(err)
	}
	ref := refs[path][0].Rows[1:]
	for i, row := range ours[0].rows {
		if fmt.Sprint(row) != fmt.Sprint(ref[i]) {
			t.Errorf("row %d: ours %q, xlrd %q", i+2, row, ref[i])
		}
	}
}

// TestWideSheet: a sheet of 1,025 columns, which openpyxl and xlrd read,
// is stored at the default memory limit; the widest a server loads
// follows its memory limit, since each column being loaded holds DuckDB
// blocks (TestBadInputsRefused: 16,384 columns at 256MB).
func TestWideSheet(t *testing.T) {
	t.Parallel()
	const width = 1025
	x := excelize.NewFile()
	for c := 1; c <= width; c++ {
		for r := 1; r <= 20; r++ {
			cell, _ := excelize.CoordinatesToCellName(c, r)
			if r == 1 {
				x.SetCellStr("Sheet1", cell, fmt.Sprintf("col %d", c))
			} else {
				x.SetCellInt("Sheet1", cell, int64(c*r))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "wide.xlsx")
	if err := x.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	x.Close()
	e, err := engine.New(engine.Config{Dir: t.TempDir(), MemoryLimit: engine.DefaultMemoryLimit, MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.MaxWidth() < width {
		t.Fatalf("the default memory limit loads %d columns, want at least %d", e.MaxWidth(), width)
	}
	s, release, err := e.Acquire(context.Background(), datadesk.NewID("u"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	fx := &fixture{t: t, in: testIngester(), store: s}
	f, err := fx.ingest(path, "wide.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	tbl := f.Tables[0]
	if len(tbl.Columns) != width || tbl.RowCount != 19 {
		t.Fatalf("%d columns and %d rows, want %d and 19", len(tbl.Columns), tbl.RowCount, width)
	}
	var last []any
	if _, err := s.Scan(context.Background(), tbl.ID, func(row []any) error { last = row; return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(last[width-1]) != fmt.Sprint(width*20) {
		t.Errorf("the last cell %v, want %d", last[width-1], width*20)
	}
	_ = os.Remove(path)
}
