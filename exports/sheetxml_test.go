package exports

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// streamWriterRows writes rows with excelize's StreamWriter from row 2 and
// returns the XML of each row as it wrote it.
func streamWriterRows(t *testing.T, rows [][]any) []string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		ref, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(ref, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open("xl/worksheets/sheet1.xml")
	if err != nil {
		t.Fatal(err)
	}
	sheet, _ := io.ReadAll(rc)
	rc.Close()
	return regexp.MustCompile(`(?s)<row r="\d+">.*?</row>`).FindAllString(string(sheet), -1)
}

// sheetXMLValues are cell values as xlsxCell hands them over, with what
// writers get wrong.
func sheetXMLValues() [][]any {
	long := strings.Repeat("ab", 20000)
	astral := strings.Repeat("😀", 20000)
	return [][]any{
		{"", " lead", "trail ", "\tt", "a\nb", "a\r\nb", `<&>"'`, "\x01ctl", "bad\xffutf8", "😀 é ß", "\n"},
		{int64(0), int64(-7), int64(999_999_999_999_999), 0.0, -0.5, 0.1 + 0.2, 1e20, 1e-10, 123456789012345678.0, math.MaxFloat64, -math.MaxFloat64},
		{1.0 / 3, 2.0 / 3, 1234567.8901234567, 9007199254740993.0, 5e-324, 1e308, 0.000123456789012345678, true, false, nil, "x"},
		{excelize.Cell{StyleID: 3, Value: 1.5}, excelize.Cell{StyleID: 7, Value: 45000.25}, excelize.Cell{StyleID: 2, Value: "styled"}, nil, nil, nil, nil, nil, nil, nil, "end"},
		{long, astral, "x", nil, nil, nil, nil, nil, nil, nil, nil},
	}
}

// TestRowXMLAsStreamWriter: rowXML writes each row byte for byte as
// excelize's StreamWriter does, for every kind of value the export hands
// it, and for random numbers.
func TestRowXMLAsStreamWriter(t *testing.T) {
	rows := sheetXMLValues()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		r := make([]any, 11)
		for j := range r {
			switch j % 4 {
			case 0:
				r[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			case 1:
				r[j] = float64(rng.Int64N(1e17)) / math.Pow(10, float64(rng.IntN(18)))
			case 2:
				r[j] = rng.Int64() >> rng.IntN(60)
			default:
				r[j] = string(rune(rng.IntN(0x2FFFF)))
			}
		}
		rows = append(rows, r)
	}
	want := streamWriterRows(t, rows)
	x, err := newRowXML(11)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(rows) {
		t.Fatalf("the StreamWriter wrote %d rows of %d", len(want), len(rows))
	}
	for i, r := range rows {
		if got := string(x.appendRow(nil, i+2, r)); got != want[i] {
			t.Errorf("row %d:\ngot  %.400s\nwant %.400s", i+2, got, want[i])
		}
	}
}

// TestRowXMLEscapesOOXMLEscapes: text holding _xHHHH_ reads back as
// written (excelize's StreamWriter drops some of it: _xD800_).
func TestRowXMLEscapesOOXMLEscapes(t *testing.T) {
	texts := []string{"_x0041_", "_x005F_", "_x005F_x0041_", "a_xD800_b", "_x00", "__x0041__", "_X0041_"}
	x, _ := newRowXML(len(texts))
	cells := make([]any, len(texts))
	for i, s := range texts {
		cells[i] = s
	}
	body := x.appendRow(nil, 2, cells)
	f := excelize.NewFile()
	defer f.Close()
	sheet := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` +
		string(body) + `</sheetData></worksheet>`
	f.Pkg.Store("xl/worksheets/sheet1.xml", []byte(sheet))
	f.Sheet.Delete("xl/worksheets/sheet1.xml")
	for i, s := range texts {
		ref, _ := excelize.CoordinatesToCellName(i+1, 2)
		got, err := f.GetCellValue("Sheet1", ref)
		if err != nil || got != s {
			t.Errorf("%q reads back as %q (%v)", s, got, err)
		}
	}
}

func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1000, 3}, {3, 1 << 20}, {12345, 67891}} {
		a, b := make([]byte, n[0]), make([]byte, n[1])
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Errorf("%v: %08x, want %08x", n, got, want)
		}
	}
}
