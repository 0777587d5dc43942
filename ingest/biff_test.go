package ingest

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestBIFFDamaged reads corpus workbook streams with bytes changed, cut
// short and records lengthened: the reader must return, without a panic,
// whatever it reads. The reader runs without the recover of readXLS here.
func TestBIFFDamaged(t *testing.T) {
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
