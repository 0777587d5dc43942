package ingest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"datadesk/internal/testenv"
)

// referencePython finds a Python that has the reference readers (openpyxl
// and xlrd, Debian's python3-openpyxl and python3-xlrd).
func referencePython() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import openpyxl, xlrd").Run() == nil {
			return p
		}
	}
	return ""
}

func init() {
	// openpyxl 3.0 takes only lower-case letters for date codes; Excel and
	// xlrd read the upper-case formats D, H, HHM, S and SS of these rows as
	// day, hours and seconds.
	for _, f := range []string{"LONumbers.xlsx", "LONumbers-2010.xlsx", "LONumbers-2011.xlsx"} {
		for _, row := range []int{9, 13, 19, 20, 21} {
			twinExceptions[fmt.Sprintf("%s|Sheet1|%d", f, row)] = "upper-case date codes, which openpyxl 3.0 does not see"
		}
	}
}

// agreesWithReference compares a reference reader's cell with datadesk's.
// Where they differ on purpose it says why.
func agreesWithReference(ref, ours string) bool {
	switch {
	case ref == ours:
		return true
	case strings.HasPrefix(ref, "n:") && strings.HasPrefix(ours, "n:"):
		// The same number, written with or without an exponent.
		a, errA := strconv.ParseFloat(ref[2:], 64)
		b, errB := strconv.ParseFloat(ours[2:], 64)
		return errA == nil && errB == nil && a == b
	case strings.HasPrefix(ours, "n:-") && (strings.HasPrefix(ref, "d:") || strings.HasPrefix(ref, "dt:") || strings.HasPrefix(ref, "t:")):
		// A negative number under a date format: Excel shows ####, the
		// references invent a date or a time; datadesk keeps the number.
		return true
	case strings.Contains(ref, "_x"):
		// openpyxl leaves the _xHHHH_ escapes of some cells undecoded.
		return unescapeXstring(ref) == ours
	}
	return false
}

// TestAgainstReferenceReaders reads every corpus workbook with datadesk
// and with the reference reader for its format (xlrd for .xls, openpyxl
// for .xlsx/.xlsm) and requires the same cells. It needs a Python with both;
// without one it is skipped (TestTwins and the goldens need none).
func TestAgainstReferenceReaders(t *testing.T) {
	t.Parallel()
	py := referencePython()
	if py == "" {
		testenv.Missing(t, "no python3 with openpyxl and xlrd")
	}
	files, _ := filepath.Glob(filepath.Join(sheetjsDir(), "*.xls*"))
	out, err := exec.Command(py, append([]string{filepath.Join("testdata", "refcells.py")}, files...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var refs map[string]json.RawMessage
	if err := json.Unmarshal(out, &refs); err != nil {
		t.Fatal(err)
	}
	in := literalIngester()
	for _, p := range files {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			var ref []struct {
				Name string     `json:"name"`
				Rows [][]string `json:"rows"`
			}
			if err := json.Unmarshal(refs[p], &ref); err != nil {
				// Encrypted or damaged: nothing to compare; corpus.golden
				// holds datadesk's refusal.
				t.Logf("the reference reader cannot read it: %s", refs[p])
				return
			}
			ours, oursErr := dumpWorkbook(t, in, p)
			var refSheets []sheetDump
			for _, s := range ref {
				if len(s.Rows) == 0 {
					continue
				}
				d := sheetDump{name: s.Name, rows: s.Rows[1:]}
				for _, c := range s.Rows[0] {
					_, v, _ := strings.Cut(c, ":")
					d.header = append(d.header, v)
				}
				refSheets = append(refSheets, d)
			}
			switch {
			case oursErr != nil && len(refSheets) > 0:
				t.Fatalf("datadesk refuses a workbook whose cells the reference reads: %v", oursErr)
			case oursErr != nil:
				return // neither finds a cell: refused with a 400, as corpus.golden says
			case len(refSheets) == 0:
				// openpyxl 3.0 reads no strict OOXML sheet; TestTwins and
				// the goldens hold what datadesk reads there.
				t.Logf("the reference finds no cell; datadesk reads %d sheets", len(ours))
				return
			}
			if diff := diffSheets(name, refSheets, ours, agreesWithReference); diff != "" {
				t.Errorf("reference (left) and datadesk (right) differ:\n%s", diff)
			}
		})
	}
}
