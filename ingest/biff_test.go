package ingest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/engine/typing"
)

// TestBIFFDamaged reads corpus workbook streams with bytes changed, cut
// short and records lengthened: the reader must return, without a panic,
// whatever it reads. The reader runs without the recover of readXLS here.
func TestBIFFDamaged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"formula_stress_test.xls", "rich_text_stress.xls", "number_format.xls", "defined_names_unicode.biff5.xls", "comments_stress_test.xls"} {
		stream, err := workbookStream(filepath.Join(sheetjsDir(), name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := 0; i < 150; i++ {
			b := append([]byte(nil), stream...)
			switch i % 3 {
			case 0:
				for j := 0; j < 1+rng.IntN(64); j++ {
					b[rng.IntN(len(b))] = byte(rng.UintN(256))
				}
			case 1:
				b = b[:rng.IntN(len(b))]
			case 2:
				// A record header claiming the most bytes it can.
				p := rng.IntN(len(b) - 4)
				b[p+2], b[p+3] = 0xFF, 0xFF
			}
			wb, err := parseBIFF(b)
			if err != nil {
				continue
			}
			for _, sh := range wb.sheets {
				if _, err := wb.sheetCells(sh.offset); err != nil {
					continue
				}
			}
		}
	}
}

// FuzzBIFF feeds arbitrary workbook streams to the reader.
func FuzzBIFF(f *testing.F) {
	for _, name := range []string{"RkNumber.xls", "ErrorTypes.xls", "sheet_visibility5.xls"} {
		if stream, err := workbookStream(filepath.Join(sheetjsDir(), name)); err == nil {
			f.Add(stream)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		wb, err := parseBIFF(b)
		if err != nil {
			return
		}
		for _, sh := range wb.sheets {
			_, _ = wb.sheetCells(sh.offset)
		}
	})
}

// biffWriter builds a BIFF8 workbook stream record by record, for tests of
// the reader's corners that no corpus file pins down.
type biffWriter struct{ b []byte }

func (w *biffWriter) rec(typ uint16, parts ...[]byte) {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	w.b = binary.LittleEndian.AppendUint16(w.b, typ)
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(len(body)))
	w.b = append(w.b, body...)
}

func u16(v int) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(v)) }
func u32(v int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func f64(v float64) []byte {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// cell is the row, column and style that start every cell record.
func cell(row, col, xf int) []byte { return append(append(u16(row), u16(col)...), u16(xf)...) }

// TestBIFFRecords reads a stream written record by record: the 1904 date
// system, a custom date format and a percentage through XF records, RK and
// MULRK numbers, BOOLERR booleans and errors, formula results of every
// kind, and shared strings, a formula's text and a label split across
// CONTINUE records, between one-byte characters that go on as two-byte
// ones (the flags byte that starts a continuation must not be read as a
// character).
func TestBIFFRecords(t *testing.T) {
	var w biffWriter
	w.rec(recBOF, u16(biffVersion8), u16(5), make([]byte, 12))
	w.rec(recDateMode, u16(1))
	w.rec(recFormat, u16(164), u16(10), []byte{0}, []byte("yyyy-mm-dd"))
	// XF 0: General; 1: built-in 10 (0.00%); 2: format 164; 3: built-in 46 ([h]:mm:ss).
	for _, f := range []int{0, 10, 164, 46} {
		w.rec(recXF, u16(0), u16(f), make([]byte, 16))
	}
	sheetAt := len(w.b)
	w.rec(recBoundSheet, u32(0), []byte{0, 0}, []byte{5, 0}, []byte("Data1"))
	// SST: "2/2 - 2/8" split after "2/2 -" and going on in two-byte
	// characters, then "naïve" (one byte a character) and a rich string
	// with two runs.
	first := append(append(u32(3), u32(3)...), append(u16(9), 0)...)
	first = append(first, []byte("2/2 -")...)
	var wide []byte
	for _, r := range " 2/8" {
		wide = append(wide, u16(int(r))...)
	}
	cont := append([]byte{1}, wide...)
	cont = append(cont, append(u16(5), 0)...)
	cont = append(cont, []byte("na\xefve")...)
	cont = append(cont, append(u16(4), 0x08)...)
	cont = append(cont, u16(2)...)
	cont = append(cont, []byte("Bold")...)
	cont = append(cont, make([]byte, 8)...) // the two runs
	w.rec(recSST, first)
	w.rec(recContinue, cont)
	w.rec(recEOF)
	binary.LittleEndian.PutUint32(w.b[sheetAt+4:], uint32(len(w.b)))

	w.rec(recBOF, u16(biffVersion8), u16(0x10), make([]byte, 12))
	w.rec(recLabelSST, cell(0, 0, 0), u32(0))
	w.rec(recLabelSST, cell(0, 1, 0), u32(1))
	w.rec(recLabelSST, cell(0, 2, 0), u32(2))
	w.rec(recNumber, cell(1, 0, 2), f64(43830)) // 2024-01-01 in the 1904 system
	w.rec(recRK, cell(1, 1, 1), u32(50<<2|2|1)) // 0.5 as an integer RK / 100
	w.rec(recMulRK, u16(1), u16(2), u16(0), u32(7<<2|2), u16(3), u32(36<<2|2), u16(3))
	w.rec(recBoolErr, cell(2, 0, 0), []byte{1, 0})
	w.rec(recBoolErr, cell(2, 1, 0), []byte{0x07, 1})
	w.rec(recFormula, cell(3, 0, 0), []byte{0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	w.rec(0x04BC, make([]byte, 8)) // SHRFMLA between a formula and its STRING
	// A formula's text split across a CONTINUE record, going on in two-byte
	// characters.
	w.rec(recString, u16(4), []byte{0}, []byte("ok"))
	w.rec(recContinue, []byte{1}, u16('!'), u16('?'))
	w.rec(recFormula, cell(3, 1, 0), []byte{1, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	w.rec(recFormula, cell(3, 2, 0), []byte{2, 0, 0x2A, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	w.rec(recFormula, cell(3, 3, 0), []byte{3, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	w.rec(recFormula, cell(4, 0, 0), f64(2.5), make([]byte, 6))
	w.rec(recLabel, cell(4, 1, 0), u16(6), []byte{0}, []byte("lab"))
	w.rec(recContinue, []byte{0}, []byte("els"))
	w.rec(recEOF)

	wb, err := parseBIFF(w.b)
	if err != nil {
		t.Fatal(err)
	}
	if !wb.date1904 || len(wb.sheets) != 1 || wb.sheets[0].name != "Data1" {
		t.Fatalf("globals: 1904 %v, sheets %+v", wb.date1904, wb.sheets)
	}
	var got []string
	err = wb.rows("t.xls", wb.sheets[0])(func(row int, texts []string, kinds []typing.CellKind) error {
		var cells []string
		for i, v := range texts {
			cells = append(cells, kindLetters[kinds[i]]+":"+v)
		}
		got = append(got, fmt.Sprintf("%d %s", row, strings.Join(cells, " ")))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 s:2/2 - 2/8 s:naïve s:Bold",
		"2 d:2024-01-01 n:0.5 n:7 n:36",
		"3 b:TRUE e:#DIV/0!",
		"4 s:ok!? b:FALSE e:#N/A",
		"5 n:2.5 s:labels",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
