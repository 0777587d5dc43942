package ingest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"datadesk/internal/testenv"
)

// TestPublicFilesFound reads public files whose tables sit under titles
// and above notes (testdata/public/README.md) and compares, cell by cell,
// the table found with what the reference reader (openpyxl, xlrd) reads
// in the rows the file's own documentation names, and the rows kept out
// with the reference's other rows.
func TestPublicFilesFound(t *testing.T) {
	t.Parallel()
	py := referencePython()
	if py == "" {
		testenv.Missing(t, "no python3 with openpyxl and xlrd")
	}
	for _, tc := range []struct {
		file             string
		header, lastData int // rows, from 1, as the reference lists them
	}{
		{"deaths.xlsx", 5, 15},
		{"deaths.xls", 5, 15},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "public", tc.file)
			out, err := exec.Command(py, filepath.Join("testdata", "refcells.py"), path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var refs map[string][]struct {
				Name string     `json:"name"`
				Rows [][]string `json:"rows"`
			}
			if err := json.Unmarshal(out, &refs); err != nil {
				t.Fatal(err)
			}
			ours, err := dumpWorkbook(t, testIngester(), path)
			if err != nil {
				t.Fatal(err)
			}
			ref := refs[path]
			if len(ours) != len(ref) {
				t.Fatalf("%d tables, the reference %d sheets", len(ours), len(ref))
			}
			for i, sh := range ref {
				d := ours[i]
				if got, want := valuesOf(d.header), valuesOf(sh.Rows[tc.header-1]); got != want {
					t.Errorf("%s: header %q, want %q", sh.Name, got, want)
				}
				data := sh.Rows[tc.header:tc.lastData]
				if len(d.rows) != len(data) {
					t.Errorf("%s: %d rows, want %d", sh.Name, len(d.rows), len(data))
				}
				for r := range min(len(d.rows), len(data)) {
					if fmt.Sprint(d.rows[r]) != fmt.Sprint(data[r]) {
						t.Errorf("%s row %d: %q, the reference %q", sh.Name, tc.header+1+r, d.rows[r], data[r])
					}
				}
				var kept []string
				for _, s := range d.skipped {
					kept = append(kept, fmt.Sprintf("%d %s", s.Row, s.Text))
				}
				var want []string
				for r, row := range sh.Rows {
					if r+1 < tc.header || r+1 > tc.lastData {
						want = append(want, fmt.Sprintf("%d %s", r+1, valuesOf(row)))
					}
				}
				if fmt.Sprint(kept) != fmt.Sprint(want) {
					t.Errorf("%s: kept out %q, want %q", sh.Name, kept, want)
				}
			}
		})
	}
}
