package ingest

import (
	"archive/zip"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/xuri/excelize/v2"

	"datadesk"
	"datadesk/engine"
)

// dateSampleRows is how many rows per sheet are read a second time, with
// number formats applied, to learn which numeric columns hold dates.
const dateSampleRows = 1000

// unzipXMLInMemory is how much of a worksheet excelize keeps in memory before
// it spills the XML to a temporary file.
const unzipXMLInMemory = 16 << 20

var (
	numericRe  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
	dateLookRe = regexp.MustCompile(`(?i)^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2}:\d{2}|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b`)
)

// checkZip refuses archives that are damaged, are not workbooks, or expand
// far more than a workbook does, before excelize unpacks anything.
func (in *Ingester) checkZip(path, filename string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return datadesk.Errorf(datadesk.Invalid, "%s is a damaged or truncated zip archive, not a readable workbook", filename).WithField("file").WithCause(err)
	}
	defer zr.Close()
	var total uint64
	workbook := false
	for _, f := range zr.File {
		total += f.UncompressedSize64
		// The workbook part is usually xl/workbook.xml, but the package
		// relationships may put it anywhere.
		if lower := strings.ToLower(f.Name); strings.HasSuffix(lower, "workbook.xml") || strings.HasSuffix(lower, "workbook.bin") {
			workbook = true
		}
		if strings.EqualFold(f.Name, "xl/workbook.bin") {
			return datadesk.Errorf(datadesk.Unsupported, "%s is a binary workbook (XLSB); save it as .xlsx and upload again", filename).WithField("file")
		}
	}
	if !workbook {
		return datadesk.Errorf(datadesk.Invalid, "%s is a zip archive but not an Excel workbook (it has no workbook part)", filename).WithField("file")
	}
	if total > uint64(in.cfg.MaxUnzipSize) {
		return datadesk.Errorf(datadesk.TooLarge, "%s expands to %d bytes; at most %d are allowed", filename, total, in.cfg.MaxUnzipSize).WithField("file")
	}
	if st.Size() > 0 && total/uint64(st.Size()) > uint64(in.cfg.MaxUnzipRatio) {
		return datadesk.Errorf(datadesk.Invalid, "%s expands %d times its size, which no real workbook does (a zip bomb?)", filename, total/uint64(st.Size())).WithField("file")
	}
	return nil
}

func (in *Ingester) openWorkbook(path, filename, tempDir string) (*excelize.File, error) {
	if err := in.checkZip(path, filename); err != nil {
		return nil, err
	}
	f, err := excelize.OpenFile(path, excelize.Options{
		UnzipSizeLimit:    in.cfg.MaxUnzipSize,
		UnzipXMLSizeLimit: min(unzipXMLInMemory, in.cfg.MaxUnzipSize),
		TmpDir:            tempDir,
		ShortDatePattern:  "yyyy-mm-dd",
		LongDatePattern:   "yyyy-mm-dd",
		LongTimePattern:   "hh:mm:ss",
	})
	if err != nil {
		if errors.Is(err, excelize.ErrWorkbookFileFormat) || strings.Contains(err.Error(), "zip") {
			return nil, datadesk.Errorf(datadesk.Invalid, "%s is not a readable workbook", filename).WithField("file").WithCause(err)
		}
		if strings.Contains(strings.ToLower(err.Error()), "encrypt") || strings.Contains(strings.ToLower(err.Error()), "password") {
			return nil, errEncrypted(filename)
		}
		return nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: the workbook is damaged", filename).WithField("file").WithCause(err)
	}
	return f, nil
}

// readXLSX prepares one table per non-empty sheet. The workbook stays open
// until Result.Close.
func (in *Ingester) readXLSX(path, filename, format, tempDir string) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: the workbook is damaged", filename).WithField("file").WithCause(fmt.Errorf("panic: %v", r))
		}
	}()
	f, err := in.openWorkbook(path, filename, tempDir)
	if err != nil {
		return nil, err
	}
	props, _ := f.GetWorkbookProps()
	date1904 := props.Date1904 != nil && *props.Date1904
	ct := "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	if format == "xlsm" {
		ct = "application/vnd.ms-excel.sheet.macroEnabled.12"
	}
	res = &Result{Format: format, ContentType: ct, Close: func() { _ = f.Close() }}
	for _, sheet := range f.GetSheetList() {
		src, ok, err := sheetSource(f, filename, sheet, date1904)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			res.Tables = append(res.Tables, src)
		}
	}
	if len(res.Tables) == 0 {
		f.Close()
		return nil, datadesk.Errorf(datadesk.Invalid, "%s has no sheet with data", filename).WithField("file")
	}
	return res, nil
}

// sheetSource finds a sheet's header (its first non-empty row) and its date
// columns; ok is false for a sheet without values.
func sheetSource(f *excelize.File, filename, sheet string, date1904 bool) (engine.TableSource, bool, error) {
	damaged := func(err error) error {
		return datadesk.Errorf(datadesk.Invalid, "%s: sheet %q could not be read", filename, sheet).WithField("file").WithCause(err)
	}
	raw, err := f.Rows(sheet)
	if err != nil {
		return engine.TableSource{}, false, damaged(err)
	}
	formatted, err := f.Rows(sheet)
	if err != nil {
		raw.Close()
		return engine.TableSource{}, false, damaged(err)
	}
	defer raw.Close()
	defer formatted.Close()

	var header []string
	headerRow := 0
	dateVotes, numVotes := map[int]int{}, map[int]int{}
	for n := 1; n <= dateSampleRows && raw.Next() && formatted.Next(); n++ {
		rv, err := raw.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return engine.TableSource{}, false, damaged(err)
		}
		if len(rv) > engine.MaxColumns {
			return engine.TableSource{}, false, datadesk.Errorf(datadesk.Invalid,
				"%s: sheet %q row %d uses %d columns; at most %d are allowed", filename, sheet, n, len(rv), engine.MaxColumns).WithField("file")
		}
		fv, err := formatted.Columns()
		if err != nil {
			return engine.TableSource{}, false, damaged(err)
		}
		if header == nil {
			if !emptyRow(rv) {
				header, headerRow = append([]string(nil), fv...), n
			}
			continue
		}
		for i, v := range rv {
			if !numericRe.MatchString(v) || i >= len(fv) {
				continue
			}
			if fv[i] != v && dateLookRe.MatchString(fv[i]) {
				dateVotes[i]++
			} else {
				numVotes[i]++
			}
		}
	}
	if err := raw.Error(); err != nil {
		return engine.TableSource{}, false, damaged(err)
	}
	if header == nil {
		return engine.TableSource{}, false, nil
	}
	width := len(header)
	for i := range dateVotes {
		width = max(width, i+1)
	}
	hints := make([]engine.Hint, width)
	for i := range hints {
		hints[i].Date1904 = date1904
		hints[i].DateSerial = dateVotes[i] > 0 && numVotes[i] == 0
	}
	src := engine.TableSource{Name: sheet, Header: header, Hints: hints}
	if visible, err := f.GetSheetVisible(sheet); err == nil && !visible {
		src.Notes = append(src.Notes, "the sheet is hidden in the workbook")
	}
	src.Rows = func(yield func([]string) error) (stats engine.RowStats, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = damaged(fmt.Errorf("panic: %v", r))
			}
		}()
		rows, err := f.Rows(sheet)
		if err != nil {
			return stats, damaged(err)
		}
		defer rows.Close()
		skipped := 0
		for n := 1; rows.Next(); n++ {
			rv, err := rows.Columns(excelize.Options{RawCellValue: true})
			if err != nil {
				return stats, damaged(err)
			}
			if n <= headerRow {
				continue
			}
			if emptyRow(rv) {
				skipped++
				continue
			}
			if len(rv) > engine.MaxColumns {
				return stats, datadesk.Errorf(datadesk.Invalid,
					"%s: sheet %q row %d uses %d columns; at most %d are allowed", filename, sheet, n, len(rv), engine.MaxColumns).WithField("file")
			}
			if err := yield(rv); err != nil {
				return stats, err
			}
		}
		if err := rows.Error(); err != nil {
			return stats, damaged(err)
		}
		if skipped > 0 {
			stats.Notes = append(stats.Notes, fmt.Sprintf("%d empty rows skipped", skipped))
		}
		return stats, nil
	}
	return src, true, nil
}

func emptyRow(row []string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}
