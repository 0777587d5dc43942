package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/typing"
)

// checkZip refuses archives that are damaged, are not workbooks, or expand
// far more than a workbook does, before anything is unpacked.
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

// xlsxBook is an open XLSX/XLSM package: what the workbook part says about
// its sheets, the shared strings, and the number format of every cell style.
type xlsxBook struct {
	zr       *zip.ReadCloser
	parts    map[string]*zip.File // by lower-case name
	sheets   []xlsxSheet
	date1904 bool
	strings  sharedStrings
	xfKinds  []fmtKind
	// memory is what the shared strings hold of the memory uploads'
	// readers share, until the book is closed.
	memory *hold
}

// close closes the package and gives back the memory its strings held.
func (wb *xlsxBook) close() {
	_ = wb.zr.Close()
	// The strings go with the memory counted for them, whoever still
	// holds the book.
	wb.strings = sharedStrings{}
	wb.memory.release()
}

type xlsxSheet struct {
	name, part string
	hidden     bool
}

// maxXMLText bounds one shared string or cell text; Excel's own limit is
// 32,767 characters.
const maxXMLText = 1 << 20

// readXLSX prepares one table per sheet with a value. The archive stays open
// until Result.Close.
func (in *Ingester) readXLSX(ctx context.Context, path, filename, format string) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: the workbook is damaged", filename).WithField("file").WithCause(fmt.Errorf("panic: %v", r))
		}
	}()
	if err := in.checkZip(path, filename); err != nil {
		return nil, err
	}
	wb, err := openXLSX(path, in.memory.hold(ctx))
	var de *datadesk.Error
	if errors.As(err, &de) {
		return nil, datadesk.Errorf(de.Code, "%s %s", filename, de.Message).WithField("file")
	}
	if err != nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: the workbook is damaged", filename).WithField("file").WithCause(err)
	}
	ct := "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	if format == "xlsm" {
		ct = "application/vnd.ms-excel.sheet.macroEnabled.12"
	}
	res = &Result{Format: format, ContentType: ct, Close: wb.close}
	budget := newCellBudget(in.cfg.MaxCells)
	for _, sh := range wb.sheets {
		srcs, err := sheetSources(filename, sh.name, wb.rows(filename, sh), budget, in.headerFor(sh.name))
		if err != nil {
			wb.close()
			return nil, err
		}
		for _, src := range srcs {
			if sh.hidden {
				src.Notes = append(src.Notes, "the sheet is hidden in the workbook")
			}
			res.Tables = append(res.Tables, src)
		}
	}
	if len(res.Tables) == 0 {
		wb.close()
		return nil, errNoCells(filename)
	}
	return res, nil
}

func errNoCells(filename string) error {
	return datadesk.Errorf(datadesk.Invalid, "%s has no sheet with data: no sheet has a cell with a value", filename).WithField("file")
}

// maxSheets bounds the sheets read of one workbook.
const maxSheets = 1000

// openXLSX reads the workbook part, its relationships, the shared strings
// (counted against memory) and the styles.
func openXLSX(path string, memory *hold) (*xlsxBook, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	wb := &xlsxBook{zr: zr, parts: map[string]*zip.File{}, memory: memory}
	for _, f := range zr.File {
		wb.parts[strings.ToLower(strings.TrimPrefix(f.Name, "/"))] = f
	}
	if err := wb.load(); err != nil {
		wb.close()
		return nil, err
	}
	return wb, nil
}

func (wb *xlsxBook) load() error {
	book := "xl/workbook.xml"
	for _, r := range wb.rels("") {
		if strings.HasSuffix(r.typ, "/officeDocument") {
			book = r.target
		}
	}
	targets := map[string]string{}
	listed := map[string]bool{}
	var sharedPart, stylesPart string
	for _, r := range wb.rels(book) {
		targets[r.id] = r.target
		switch {
		case strings.HasSuffix(r.typ, "/sharedStrings"):
			sharedPart = r.target
		case strings.HasSuffix(r.typ, "/styles"):
			stylesPart = r.target
		}
	}
	err := wb.scan(book, func(d *xml.Decoder, se xml.StartElement) error {
		switch se.Name.Local {
		case "workbookPr":
			v := attr(se, "date1904")
			wb.date1904 = v == "1" || v == "true"
		case "sheet":
			part := targets[attrNS(se, "id")]
			// Part names are compared without regard to case (ECMA-376
			// Part 2, 9.1.1.1), as parts are looked up.
			key := strings.ToLower(part)
			if listed[key] {
				return datadesk.Errorf(datadesk.Invalid, "lists the worksheet %s more than once; a workbook lists each sheet once", part)
			}
			if len(wb.sheets) == maxSheets {
				return datadesk.Errorf(datadesk.Invalid, "has more than %d sheets; at most %d are read", maxSheets, maxSheets)
			}
			listed[key] = true
			wb.sheets = append(wb.sheets, xlsxSheet{
				name:   attr(se, "name"),
				part:   part,
				hidden: attr(se, "state") == "hidden" || attr(se, "state") == "veryHidden",
			})
		}
		return nil
	})
	var de *datadesk.Error
	if errors.As(err, &de) {
		return de
	}
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if sharedPart != "" {
		if err := wb.loadStrings(sharedPart); err != nil {
			if errors.As(err, &de) {
				return datadesk.Errorf(de.Code, "has shared strings that %s", de.Message)
			}
			return fmt.Errorf("shared strings: %w", err)
		}
	}
	if stylesPart != "" {
		if err := wb.loadStyles(stylesPart); err != nil {
			return fmt.Errorf("styles: %w", err)
		}
	}
	return nil
}

type xlsxRel struct{ id, typ, target string }

// rels reads the relationships of a part ("" for the package), with
// targets resolved to part names.
func (wb *xlsxBook) rels(part string) []xlsxRel {
	dir, base := pathpkg.Split(part)
	var out []xlsxRel
	_ = wb.scan(dir+"_rels/"+base+".rels", func(d *xml.Decoder, se xml.StartElement) error {
		if se.Name.Local != "Relationship" || attr(se, "TargetMode") == "External" {
			return nil
		}
		t := attr(se, "Target")
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = pathpkg.Join(dir, t)
		}
		out = append(out, xlsxRel{id: attr(se, "Id"), typ: attr(se, "Type"), target: t})
		return nil
	})
	return out
}

// scan calls fn for every start element of a part; a missing part is empty.
func (wb *xlsxBook) scan(part string, fn func(*xml.Decoder, xml.StartElement) error) error {
	f := wb.parts[strings.ToLower(part)]
	if f == nil {
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok {
			if err := fn(d, se); err != nil {
				return err
			}
		}
	}
}

// sharedStrings are a workbook's shared strings end to end in one block,
// with where each ends: a string costs its bytes and four more, never more
// than its XML did, so that the part's size bounds them.
type sharedStrings struct {
	text []byte
	ends []uint32
}

func (ss *sharedStrings) len() int { return len(ss.ends) }

// at is string i, 0 <= i < len().
func (ss *sharedStrings) at(i int) string {
	start := uint32(0)
	if i > 0 {
		start = ss.ends[i-1]
	}
	return string(ss.text[start:ss.ends[i]])
}

// cost is the memory the strings hold.
func (ss *sharedStrings) cost() int64 { return int64(cap(ss.text)) + 4*int64(cap(ss.ends)) }

// add appends a string's text, its _xHHHH_ escapes undone, without a
// copy of it on the way. Errors: one past the block's capacity, which the
// part's declared size set (a part that says less than it holds).
func (ss *sharedStrings) add(s []byte) error {
	if bytes.Contains(s, []byte("_x")) {
		s = []byte(unescapeXstring(string(s)))
	}
	if len(ss.text)+len(s) > cap(ss.text) {
		return fmt.Errorf("the shared strings are larger than their part says")
	}
	ss.text = append(ss.text, s...)
	ss.ends = append(ss.ends, uint32(len(ss.text)))
	return nil
}

// loadStrings reads the shared strings: each <si> is its <t> texts joined,
// without the phonetic guides (<rPh>) of East Asian text. The part's size
// is taken of the memory uploads' readers share before a byte is read
// (at once, so that readers never wait on each other part-way), and the
// strings are read by xmlScanner, which makes no garbage of its tokens.
func (wb *xlsxBook) loadStrings(part string) error {
	f := wb.parts[strings.ToLower(part)]
	if f == nil {
		return nil
	}
	if err := wb.memory.need(int64(f.UncompressedSize64)); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	s := newXMLScanner(rc)
	text := make([]byte, 0, 4<<10)
	wb.strings.text = make([]byte, 0, f.UncompressedSize64)
	inSI, inT, phonetic := false, false, 0
	for {
		if err := s.next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		name := string(s.name)
		switch {
		case s.kind == xmlText:
			if inSI && inT && phonetic == 0 && len(text) < maxXMLText {
				if text, err = appendXMLText(text, s.text, s.cdata); err != nil {
					return err
				}
			}
			continue
		case s.kind == xmlStart && name == "si":
			inSI, text = true, text[:0]
		case s.kind == xmlStart && name == "t":
			inT = true
		case s.kind == xmlStart && name == "rPh":
			phonetic++
		}
		if s.kind == xmlStart && !s.selfClose {
			continue
		}
		// An end tag, or a start tag that ends itself.
		switch name {
		case "t":
			inT = false
		case "rPh":
			phonetic--
		case "si":
			if err := wb.strings.add(text); err != nil {
				return err
			}
			// Only the list of ends may pass the part's size, for a
			// part of nothing but empty strings.
			if err := wb.memory.need(wb.strings.cost()); err != nil {
				return err
			}
			inSI = false
		}
	}
}

// loadStyles reads the number formats of the cell styles (cellXfs), the
// styles a cell's s attribute points at.
func (wb *xlsxBook) loadStyles(part string) error {
	codes := map[int]string{}
	inXfs := false
	var ids []int
	err := wb.scan(part, func(d *xml.Decoder, se xml.StartElement) error {
		switch se.Name.Local {
		case "numFmt":
			if id, err := strconv.Atoi(attr(se, "numFmtId")); err == nil {
				codes[id] = attr(se, "formatCode")
			}
		case "cellXfs":
			inXfs = true
		case "cellStyleXfs", "dxfs":
			inXfs = false
		case "xf":
			if inXfs {
				id, _ := strconv.Atoi(attr(se, "numFmtId"))
				ids = append(ids, id)
			}
		}
		return nil
	})
	for _, id := range ids {
		wb.xfKinds = append(wb.xfKinds, formatKind(id, codes[id]))
	}
	return err
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// attrNS finds a namespaced attribute (r:id) by its local name.
func attrNS(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

// rows streams a worksheet's rows from its XML. A cell's column comes from
// its reference (or follows the one before); a style attribute that is
// empty or unknown means the default style. The worksheet, most of a
// workbook's bytes, is read by xmlScanner; the XML is inflated and read on
// a goroutine of its own while the rows before are typed and stored
// (pipelined).
func (wb *xlsxBook) rows(filename string, sh xlsxSheet) sheetRows {
	return pipelined(filename, sh.name, func(yield func(int, []string, []typing.CellKind) error) error {
		f := wb.parts[strings.ToLower(sh.part)]
		if f == nil {
			return nil
		}
		rc, err := f.Open()
		if err != nil {
			return damagedSheet(filename, sh.name, err)
		}
		defer rc.Close()
		return wb.readSheet(filename, sh.name, rc, yield)
	})
}

// readSheet reads a worksheet's XML from r.
func (wb *xlsxBook) readSheet(filename, sheet string, r io.Reader, yield func(int, []string, []typing.CellKind) error) error {
	s := newXMLScanner(r)
	sx := &sheetXML{wb: wb}
	for {
		err := s.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return damagedSheet(filename, sheet, err)
		}
		switch s.kind {
		case xmlStart:
			if err := sx.start(s); err != nil {
				return damagedSheet(filename, sheet, err)
			}
			if sx.col > engine.MaxColumns {
				return tooWide(filename, sheet, sx.row, sx.col)
			}
			if !s.selfClose {
				continue
			}
		case xmlText:
			if sx.target != nil && len(*sx.target) < maxXMLText {
				if *sx.target, err = appendXMLText(*sx.target, s.text, s.cdata); err != nil {
					return damagedSheet(filename, sheet, err)
				}
			}
			continue
		}
		// An end tag, or a start tag that ends itself.
		switch string(s.name) {
		case "row":
			if len(sx.texts) > 0 {
				if err := yield(sx.row, sx.texts, sx.kinds); err != nil {
					return err
				}
			}
		case "sheetData":
			return nil
		default:
			sx.end(s.name)
		}
	}
}

// sheetXML is the state of reading a worksheet's XML: the row being read
// and the cell inside it.
type sheetXML struct {
	wb       *xlsxBook
	texts    []string
	kinds    []typing.CellKind
	row, col int
	cell     xlsxCell
	inCell   bool
	inInline bool
	phonetic int
	target   *[]byte // where the text being read goes
	v, is    []byte  // the cell's <v> and inline <is> texts
}

type xlsxCell struct {
	typ   string
	style int
}

// cellTypes holds the t attribute's values as strings made once.
var cellTypes = map[string]string{"s": "s", "n": "n", "b": "b", "e": "e", "d": "d", "str": "str", "inlineStr": "inlineStr"}

func (sx *sheetXML) start(s *xmlScanner) error {
	switch string(s.name) {
	case "row":
		sx.row++
		if r, err := strconv.Atoi(s.attrString("r")); err == nil && r > 0 {
			sx.row = r
		}
		sx.texts, sx.kinds, sx.col = sx.texts[:0], sx.kinds[:0], 0
	case "c":
		sx.col++
		ref, _, err := s.attr("r")
		if err != nil {
			return err
		}
		if bytes.IndexByte(ref, '&') >= 0 {
			ref = []byte(s.attrString("r"))
		}
		if c := refColumn(ref); c > 0 {
			sx.col = c
		}
		typ, _, err := s.attr("t")
		if err != nil {
			return err
		}
		sx.cell = xlsxCell{typ: cellTypes[string(typ)]}
		if sx.cell.typ == "" && len(typ) > 0 {
			sx.cell.typ = s.attrString("t")
		}
		if style, ok, _ := s.attr("s"); ok {
			if sx.cell.style, err = strconv.Atoi(string(style)); err != nil {
				sx.cell.style, _ = strconv.Atoi(s.attrString("s"))
			}
		}
		sx.inCell = true
		sx.v, sx.is = sx.v[:0], sx.is[:0]
	case "v":
		if sx.inCell {
			sx.target = &sx.v
		}
	case "is":
		sx.inInline = true
	case "t":
		if sx.inInline && sx.phonetic == 0 {
			sx.target = &sx.is
		}
	case "rPh":
		sx.phonetic++
	}
	return nil
}

func (sx *sheetXML) end(name []byte) {
	switch string(name) {
	case "v", "t":
		sx.target = nil
	case "is":
		sx.inInline = false
	case "rPh":
		sx.phonetic--
	case "c":
		sx.inCell = false
		text, kind := sx.value()
		if kind == typing.KindEmpty || sx.col < 1 {
			return
		}
		for len(sx.texts) < sx.col {
			sx.texts, sx.kinds = append(sx.texts, ""), append(sx.kinds, typing.KindEmpty)
		}
		sx.texts[sx.col-1], sx.kinds[sx.col-1] = text, kind
	}
}

// value is the cell just read: a shared string's index is read without
// making a string of it.
func (sx *sheetXML) value() (string, typing.CellKind) {
	if sx.cell.typ == "s" {
		i, err := strconv.Atoi(string(bytes.TrimSpace(sx.v)))
		if err != nil || i < 0 || i >= sx.wb.strings.len() {
			return "", typing.KindEmpty
		}
		return textCell(sx.wb.strings.at(i))
	}
	return sx.wb.cellValue(sx.cell, string(sx.v), string(sx.is))
}

// cellValue turns a cell's stored value into its text and kind.
func (wb *xlsxBook) cellValue(c xlsxCell, v, inline string) (string, typing.CellKind) {
	switch c.typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= wb.strings.len() {
			return "", typing.KindEmpty
		}
		return textCell(wb.strings.at(i))
	case "inlineStr":
		return textCell(unescapeXstring(inline))
	case "str":
		return textCell(unescapeXstring(v))
	case "b":
		if v == "" {
			return "", typing.KindEmpty
		}
		return boolText(v == "1" || v == "true"), typing.KindBool
	case "e":
		return v, typing.KindError
	case "d":
		if v == "" {
			return "", typing.KindEmpty
		}
		text, kind := isoCell(v)
		if serial, ok := isoSerial(text, kind, wb.date1904); ok && wb.styleKind(c.style) != fmtNumber {
			return numberCell(serial, wb.styleKind(c.style), wb.date1904)
		}
		return text, kind
	}
	if v == "" {
		return textCell(inline)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return textCell(v)
	}
	return numberCell(n, wb.styleKind(c.style), wb.date1904)
}

// styleKind is the kind of the number format of cell style s.
func (wb *xlsxBook) styleKind(s int) fmtKind {
	if s >= 0 && s < len(wb.xfKinds) {
		return wb.xfKinds[s]
	}
	return fmtNumber
}

// unescapeXstring decodes the _xHHHH_ escapes OOXML writes for characters
// XML cannot carry (carriage return, control characters); _x005F_ is an
// escaped underscore.
func unescapeXstring(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+7 <= len(s) && s[i] == '_' && s[i+1] == 'x' && s[i+6] == '_' {
			if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(v))
				i += 7
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func textCell(s string) (string, typing.CellKind) {
	if s == "" {
		return "", typing.KindEmpty
	}
	return s, typing.KindText
}

// refColumn is the 1-based column of a cell reference such as "AB12", or 0.
func refColumn(ref []byte) int {
	col := 0
	for i := 0; i < len(ref); i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a') + 1
		if col > 1<<20 {
			return col
		}
	}
	return col
}
