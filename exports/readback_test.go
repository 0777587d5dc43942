package exports

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
	"datadesk/internal/testenv"
)

var readBackColumns = []catalog.Column{
	{Key: "id", Label: "Id", Type: typing.TypeText, Identifier: true},
	{Key: "qty", Label: "Qty", Type: typing.TypeInteger},
	{Key: "amount", Label: "Amount", Type: typing.TypeDouble},
	{Key: "price", Label: "Price", Type: typing.TypeDecimal},
	{Key: "day", Label: "Day", Type: typing.TypeDate},
	{Key: "at", Label: "At", Type: typing.TypeTimestamp},
	{Key: "ok", Label: "Ok", Type: typing.TypeBoolean},
	{Key: "note", Label: "Note", Type: typing.TypeText},
}

// readBackNotes are texts for the note column. Text holding an OOXML
// escape (_x0041_) is left to TestRowXMLEscapesOOXMLEscapes: Excel and
// excelize decode the escapes, openpyxl shows them as written.
var readBackNotes = []string{"plain", " leading space", "a < b & c > d", "quote \" and ' apostrophe", "line\nbreak", "é ß 😀 中文", "trailing tab\t", "-5"}

func readBackRow(i int, row []any) {
	row[0] = fmt.Sprintf("%08d", i)
	row[1] = int64(i%1000 - 500)
	row[2] = float64(i)/7 + 0.1
	row[3] = json.Number(fmt.Sprintf("%d.%02d", i%10000, i%100))
	row[4] = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%3000)
	row[5] = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 37 * time.Second)
	row[6] = i%3 == 0
	row[7] = readBackNotes[i%len(readBackNotes)]
	if i%11 == 0 {
		row[7] = nil
	}
}

// readBackWant is what a reader must show for row i's cells.
func readBackWant(i int) []string {
	row := make([]any, len(readBackColumns))
	readBackRow(i, row)
	price, _ := strconv.ParseFloat(string(row[3].(json.Number)), 64)
	amount, _ := strconv.ParseFloat(string(appendExcelFloat(nil, row[2].(float64))), 64)
	ok := "FALSE"
	if row[6].(bool) {
		ok = "TRUE"
	}
	note := "<nil>"
	if row[7] != nil {
		note = row[7].(string)
	}
	return []string{row[0].(string), strconv.FormatInt(row[1].(int64), 10), fmt.Sprint(amount), fmt.Sprint(price),
		row[4].(time.Time).Format("2006-01-02T15:04:05"), row[5].(time.Time).Format("2006-01-02T15:04:05"), ok, note}
}

func writeReadBack(t *testing.T, n int) string {
	t.Helper()
	src := Source{Columns: readBackColumns, Count: int64(n), Rows: func(yield func([]any) error) error {
		row := make([]any, len(readBackColumns))
		for i := range n {
			readBackRow(i, row)
			if err := yield(row); err != nil {
				return err
			}
		}
		return nil
	}}
	path := filepath.Join(t.TempDir(), "export.xlsx")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteXLSX(f, src, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestXLSXReadBackWhole: an export of 20,000 rows reads back whole, cell
// by cell, in openpyxl's read-only mode and its normal mode. Its sheet
// holds 6.8 MiB of rows' XML: seven of the blocks deflated side by side
// and joined, more than the cores that deflate them (100,000 rows proved
// no more, and openpyxl's normal mode took a minute over them).
func TestXLSXReadBackWhole(t *testing.T) {
	t.Parallel()
	python := openpyxlPython(t)
	const n = 20_000
	path := writeReadBack(t, n)
	if st, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("%d rows: %d bytes deflated", n, st.Size())
	}
	for _, mode := range []string{"readonly", "normal"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(python, "testdata/read_xlsx_rows.py", path, mode)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			rows, bad := 0, 0
			for sc.Scan() {
				var cells []any
				if err := json.Unmarshal(sc.Bytes(), &cells); err != nil {
					t.Fatalf("line %d: %v", rows+1, err)
				}
				if rows == 0 {
					if fmt.Sprint(cells) != "[Id Qty Amount Price Day At Ok Note]" {
						t.Errorf("header %v", cells)
					}
				} else if got, want := readBackCells(cells), readBackWant(rows-1); fmt.Sprint(got) != fmt.Sprint(want) && bad < 5 {
					bad++
					t.Errorf("row %d:\ngot  %q\nwant %q", rows+1, got, want)
				}
				rows++
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			if rows != n+1 {
				t.Fatalf("%s read %d rows, want %d", mode, rows, n+1)
			}
		})
	}
}

// readBackCells turns openpyxl's cells into readBackWant's form.
func readBackCells(cells []any) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		s := fmt.Sprint(c)
		if c == nil {
			s = "<nil>"
		}
		if i == 2 || i == 3 {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				s = fmt.Sprint(f)
			}
		}
		out[i] = s
	}
	return out
}

// TestXLSXLibreOfficeReadsWhole: LibreOffice Calc opens an export and
// converts its data sheet to CSV with every row.
func TestXLSXLibreOfficeReadsWhole(t *testing.T) {
	t.Parallel()
	soffice := ""
	for _, name := range []string{"soffice", "libreoffice"} {
		if p, err := exec.LookPath(name); err == nil {
			soffice = p
			break
		}
	}
	if soffice == "" || !calcInstalled(soffice) {
		testenv.Missing(t, "LibreOffice Calc is not installed (make test installs Debian's libreoffice-calc-nogui)")
	}
	const n = 20_000
	path := writeReadBack(t, n)
	dir := filepath.Dir(path)
	cmd := exec.Command(soffice, "--headless", "--norestore", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"),
		"--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,1", "--outdir", dir, path)
	timer := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	out, err := cmd.CombinedOutput()
	timer.Stop()
	if err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "export-Data.csv"))
	if err != nil {
		f, err = os.Open(filepath.Join(dir, "export.csv"))
	}
	if err != nil {
		t.Fatalf("no CSV: %v\n%s", err, out)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != n+1 {
		t.Fatalf("LibreOffice read %d rows, want %d", len(records), n+1)
	}
	for i := 1; i <= n; i += 997 {
		want := readBackWant(i - 1)
		if records[i][0] != want[0] || records[i][1] != want[1] || strings.ReplaceAll(records[i][7], "\r", "") != strings.ReplaceAll(want[7], "<nil>", "") {
			t.Errorf("row %d: %q, want %q", i+1, records[i], want)
		}
	}
}

// calcInstalled reports whether LibreOffice has its spreadsheet part.
func calcInstalled(soffice string) bool {
	real, err := filepath.EvalSymlinks(soffice)
	if err != nil {
		return false
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "libsclo.so"))
	return len(matches) > 0
}
