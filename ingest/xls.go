package ingest

import (
	"fmt"

	"datadesk"
)

// oleEncrypted reports whether an OLE compound file is password protected:
// an encrypted OOXML package (EncryptionInfo stream) or a BIFF workbook whose
// globals carry a FILEPASS record.
func oleEncrypted(path string) (bool, error) {
	// The globals, where FILEPASS sits, are at the stream's start.
	encrypted, wb, err := readOLE(path, 1<<20)
	return encrypted || biffHasFilePass(wb), err
}

// maxBIFFScan bounds how much of a workbook stream is read.
const maxBIFFScan = 256 << 20

func biffHasFilePass(b []byte) bool {
	for pos := 0; ; {
		rec, next, ok := nextRecord(b, pos)
		if !ok || rec.typ == recEOF {
			return false
		}
		if rec.typ == recFilePass {
			return true
		}
		pos = next
	}
}

// readXLS reads a BIFF5 or BIFF8 workbook (Excel 5 to 2003, and what
// LibreOffice and others write as .xls): one table per sheet with a value.
// The reader bounds every count and length it reads from the file and a
// panic in it is recovered here, so a damaged file is a 400.
func (in *Ingester) readXLS(path, filename string) (res *Result, err error) {
	damaged := func(cause error) error {
		return datadesk.Errorf(datadesk.Invalid, "%s could not be read: it is not a readable Excel 5-2003 (BIFF5/BIFF8) workbook; save it as .xlsx and upload again", filename).WithField("file").WithCause(cause)
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, damaged(fmt.Errorf("panic: %v", r))
		}
	}()
	stream, err := workbookStream(path)
	if err != nil {
		return nil, damaged(err)
	}
	wb, err := parseBIFF(stream)
	if err != nil {
		return nil, damaged(err)
	}
	res = &Result{Format: "xls", ContentType: "application/vnd.ms-excel", Close: func() {}}
	var notes []string
	budget := newCellBudget(in.cfg.MaxCells)
	for _, sh := range wb.sheets {
		srcs, err := sheetSources(filename, sh.name, wb.rows(filename, sh), budget, in.headerFor(sh.name))
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			if sh.hidden {
				src.Notes = append(src.Notes, "the sheet is hidden in the workbook")
			}
			res.Tables = append(res.Tables, src)
		}
	}
	if wb.formulas > 0 {
		notes = append(notes, fmt.Sprintf("the workbook has %d formula cells; their values are the results last saved with it", wb.formulas))
	}
	for i := range res.Tables {
		res.Tables[i].Notes = append(res.Tables[i].Notes, notes...)
	}
	if len(res.Tables) == 0 {
		return nil, errNoCells(filename)
	}
	return res, nil
}
