package ingest

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf16"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"

	"datadesk/engine"
	"datadesk/engine/typing"
)

// BIFF record types read here (Microsoft's [MS-XLS] names them).
const (
	recBOF        = 0x0809
	recEOF        = 0x000A
	recBoundSheet = 0x0085
	recCodepage   = 0x0042
	recDateMode   = 0x0022
	recFormat     = 0x041E
	recXF         = 0x00E0
	recSST        = 0x00FC
	recContinue   = 0x003C
	recFilePass   = 0x002F
	recLabel      = 0x0204
	recLabelSST   = 0x00FD
	recRString    = 0x00D6
	recNumber     = 0x0203
	recRK         = 0x027E
	recMulRK      = 0x00BD
	recBoolErr    = 0x0205
	recFormula    = 0x0006
	recString     = 0x0207
)

// biffVersion8 is the BOF version of Excel 97 and later; Excel 5 and 95
// write 0x0500 (BIFF5), with byte strings in the workbook's code page.
const biffVersion8 = 0x0600

// maxBIFFSheets bounds the sheets of a workbook, far above what Excel
// writes, so a damaged list of sheets cannot make the reader read one
// sheet's records over and over.
const maxBIFFSheets = 4096

// maxBIFFCells bounds the cells of one sheet: a BIFF8 sheet has 65,536 rows
// of 256 columns.
const maxBIFFCells = 65536 * 256

// biffErrors are the error values a cell can hold, as Excel shows them.
var biffErrors = map[byte]string{0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!", 0x2A: "#N/A", 0x2B: "#GETTING_DATA"}

// biffBook is what the globals of a BIFF5 or BIFF8 workbook stream say:
// its sheets, shared strings, the number format of every cell style, the
// date system and the code page of byte strings.
type biffBook struct {
	stream   []byte
	biff8    bool
	date1904 bool
	decoder  *encoding.Decoder
	sst      []string
	xfKinds  []fmtKind
	sheets   []biffSheet
	formulas int
}

type biffSheet struct {
	name   string
	offset int
	hidden bool
}

type biffRecord struct {
	typ  uint16
	data []byte
}

// nextRecord reads the record at pos; ok is false at the end of the stream
// or where a record claims more bytes than remain.
func nextRecord(b []byte, pos int) (rec biffRecord, next int, ok bool) {
	if pos < 0 || pos+4 > len(b) {
		return rec, pos, false
	}
	n := int(binary.LittleEndian.Uint16(b[pos+2:]))
	if pos+4+n > len(b) {
		return rec, pos, false
	}
	return biffRecord{binary.LittleEndian.Uint16(b[pos:]), b[pos+4 : pos+4+n]}, pos + 4 + n, true
}

var errNotBIFF = errors.New("not a BIFF5 or BIFF8 workbook stream")

// parseBIFF reads the workbook globals. Every count and length read from
// the file is checked against the bytes that remain, so a damaged file
// gives an error or fewer values, never a panic or a loop.
func parseBIFF(stream []byte) (*biffBook, error) {
	wb := &biffBook{stream: stream, decoder: charmap.Windows1252.NewDecoder()}
	rec, pos, ok := nextRecord(stream, 0)
	if !ok || rec.typ != recBOF || len(rec.data) < 2 {
		return nil, errNotBIFF
	}
	switch v := binary.LittleEndian.Uint16(rec.data); v {
	case biffVersion8:
		wb.biff8 = true
	case 0x0500:
	default:
		return nil, fmt.Errorf("BIFF version %#x: %w", v, errNotBIFF)
	}
	formats := map[int]string{}
	seen := map[int]bool{} // sheet offsets: each sheet is read once
	var xfFormats []int
	for {
		rec, next, ok := nextRecord(stream, pos)
		if !ok || rec.typ == recEOF {
			break
		}
		pos = next
		d := rec.data
		switch rec.typ {
		case recCodepage:
			if len(d) >= 2 {
				if dec := codepageDecoder(binary.LittleEndian.Uint16(d)); dec != nil {
					wb.decoder = dec
				}
			}
		case recDateMode:
			wb.date1904 = len(d) >= 2 && binary.LittleEndian.Uint16(d) == 1
		case recFormat:
			if len(d) >= 3 {
				if wb.biff8 {
					formats[int(binary.LittleEndian.Uint16(d))], _ = wb.unicodeString(d[2:], 2)
				} else {
					formats[int(binary.LittleEndian.Uint16(d))] = wb.byteString(d[2:], 1)
				}
			}
		case recXF:
			if len(d) >= 4 {
				xfFormats = append(xfFormats, int(binary.LittleEndian.Uint16(d[2:])))
			}
		case recBoundSheet:
			if len(d) >= 7 {
				sh := biffSheet{offset: int(binary.LittleEndian.Uint32(d)), hidden: d[4]&3 != 0}
				if wb.biff8 {
					sh.name, _ = wb.unicodeString(d[6:], 1)
				} else {
					sh.name = wb.byteString(d[6:], 1)
				}
				if len(wb.sheets) < maxBIFFSheets && !seen[sh.offset] {
					seen[sh.offset] = true
					wb.sheets = append(wb.sheets, sh)
				}
			}
		case recSST:
			var segs [][]byte
			segs, pos = continued(stream, d, pos)
			if wb.biff8 {
				wb.sst = readSST(segs)
			}
		}
	}
	for _, id := range xfFormats {
		wb.xfKinds = append(wb.xfKinds, formatKind(id, formats[id]))
	}
	return wb, nil
}

// codepageDecoder is the decoder for a CODEPAGE record's Windows code page,
// or nil for one not known here (Windows-1252 is kept).
func codepageDecoder(cp uint16) *encoding.Decoder {
	var e encoding.Encoding
	switch cp {
	case 437:
		e = charmap.CodePage437
	case 850:
		e = charmap.CodePage850
	case 852:
		e = charmap.CodePage852
	case 866:
		e = charmap.CodePage866
	case 874:
		e = charmap.Windows874
	case 932:
		e = japanese.ShiftJIS
	case 936:
		e = simplifiedchinese.GBK
	case 949:
		e = korean.EUCKR
	case 950:
		e = traditionalchinese.Big5
	case 1250:
		e = charmap.Windows1250
	case 1251:
		e = charmap.Windows1251
	case 1252, 0x8001:
		e = charmap.Windows1252
	case 1253:
		e = charmap.Windows1253
	case 1254:
		e = charmap.Windows1254
	case 1255:
		e = charmap.Windows1255
	case 1256:
		e = charmap.Windows1256
	case 1257:
		e = charmap.Windows1257
	case 1258:
		e = charmap.Windows1258
	case 10000, 0x8000:
		e = charmap.Macintosh
	default:
		return nil
	}
	return e.NewDecoder()
}

// byteString reads a BIFF5 string: a length of lenSize bytes and the
// characters in the workbook's code page.
func (wb *biffBook) byteString(d []byte, lenSize int) string {
	if len(d) < lenSize {
		return ""
	}
	n := int(d[0])
	if lenSize == 2 {
		n = int(binary.LittleEndian.Uint16(d))
	}
	d = d[lenSize:]
	n = min(n, len(d))
	s, err := wb.decoder.String(string(d[:n]))
	if err != nil {
		return string(d[:n])
	}
	return s
}

// unicodeString reads a BIFF8 string in one record: a length of lenSize
// bytes, a flags byte (bit 0: two bytes a character, bit 2: East Asian
// phonetic data follows, bit 3: rich text runs follow) and the characters.
// It returns the string and the bytes it used.
func (wb *biffBook) unicodeString(d []byte, lenSize int) (string, int) {
	if len(d) < lenSize+1 {
		return "", len(d)
	}
	n := int(d[0])
	if lenSize == 2 {
		n = int(binary.LittleEndian.Uint16(d))
	}
	flags := d[lenSize]
	pos := lenSize + 1
	runs, ext := 0, 0
	if flags&0x08 != 0 && pos+2 <= len(d) {
		runs = int(binary.LittleEndian.Uint16(d[pos:]))
		pos += 2
	}
	if flags&0x04 != 0 && pos+4 <= len(d) {
		ext = int(binary.LittleEndian.Uint32(d[pos:]) & 0x7FFFFFFF)
		pos += 4
	}
	s, used := decodeChars(d[min(pos, len(d)):], n, flags&1 != 0)
	return s, min(len(d), pos+used+4*runs+ext)
}

// decodeChars reads up to n characters, one or two bytes each, from d.
func decodeChars(d []byte, n int, wide bool) (string, int) {
	if !wide {
		n = min(n, len(d))
		r := make([]rune, n)
		for i := range r {
			r[i] = rune(d[i])
		}
		return string(r), n
	}
	n = min(n, len(d)/2)
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(d[2*i:])
	}
	return string(utf16.Decode(u)), 2 * n
}

// sstReader reads the shared string table across its SST record and the
// CONTINUE records after it.
type sstReader struct {
	segs [][]byte
	seg  int
	pos  int
}

func (r *sstReader) left() int {
	if r.seg >= len(r.segs) {
		return 0
	}
	return len(r.segs[r.seg]) - r.pos
}

// advance moves to the next record when the current one is used up.
func (r *sstReader) advance() bool {
	for r.seg < len(r.segs) && r.pos >= len(r.segs[r.seg]) {
		r.pos -= len(r.segs[r.seg])
		r.seg++
	}
	return r.seg < len(r.segs)
}

func (r *sstReader) bytes(n int) []byte {
	if !r.advance() || r.left() < n {
		r.seg = len(r.segs)
		return nil
	}
	b := r.segs[r.seg][r.pos : r.pos+n]
	r.pos += n
	return b
}

// skip passes over rich text runs and phonetic data, which may run on
// into the next records without a flags byte.
func (r *sstReader) skip(n int) {
	for n > 0 && r.advance() {
		step := min(n, r.left())
		r.pos += step
		n -= step
	}
}

// readSST reads every shared string.
func readSST(segs [][]byte) []string {
	r := &sstReader{segs: segs}
	head := r.bytes(8)
	if head == nil {
		return nil
	}
	total := 0
	for _, s := range segs {
		total += len(s)
	}
	unique := int(min(binary.LittleEndian.Uint32(head[4:]), uint32(total/3+1)))
	out := make([]string, 0, unique)
	for len(out) < unique {
		s, ok := r.str()
		if !ok {
			break
		}
		out = append(out, s)
	}
	return out
}

// str reads one string (XLUnicodeRichExtendedString): a character count,
// a flags byte (bit 0: two bytes a character, bit 2: East Asian phonetic
// data follows, bit 3: rich text runs follow), the characters, the runs
// and the phonetic data. Characters split across records go on in the
// next record after a new flags byte, whose bit 0 says whether the rest is
// one or two bytes a character.
func (r *sstReader) str() (string, bool) {
	h := r.bytes(3)
	if h == nil {
		return "", false
	}
	n, flags := int(binary.LittleEndian.Uint16(h)), h[2]
	runs, ext := 0, 0
	if flags&0x08 != 0 {
		b := r.bytes(2)
		if b == nil {
			return "", false
		}
		runs = int(binary.LittleEndian.Uint16(b))
	}
	if flags&0x04 != 0 {
		b := r.bytes(4)
		if b == nil {
			return "", false
		}
		ext = int(binary.LittleEndian.Uint32(b) & 0x7FFFFFFF)
	}
	wide := flags&1 != 0
	u := make([]uint16, 0, n)
	for len(u) < n {
		if r.left() <= 0 {
			r.seg, r.pos = r.seg+1, 0
			if r.seg >= len(r.segs) || len(r.segs[r.seg]) == 0 {
				break
			}
			wide, r.pos = r.segs[r.seg][0]&1 != 0, 1
			continue
		}
		d := r.segs[r.seg][r.pos:]
		if wide {
			k := min(n-len(u), len(d)/2)
			for i := 0; i < k; i++ {
				u = append(u, binary.LittleEndian.Uint16(d[2*i:]))
			}
			r.pos += 2 * k
			if k == 0 {
				r.pos = len(r.segs[r.seg]) // one odd byte left: damaged
			}
			continue
		}
		k := min(n-len(u), len(d))
		for i := 0; i < k; i++ {
			u = append(u, uint16(d[i]))
		}
		r.pos += k
	}
	r.skip(4*runs + ext)
	return string(utf16.Decode(u)), true
}

// biffCell is one cell of a sheet as read.
type biffCell struct {
	row, col int
	text     string
	kind     typing.CellKind
}

// sheetCells reads the cells of the sheet whose BOF is at offset, sorted by
// row and column; a later record for the same cell wins. Records of
// embedded charts (their own BOF to EOF) are passed over.
func (wb *biffBook) sheetCells(offset int) ([]biffCell, error) {
	rec, pos, ok := nextRecord(wb.stream, offset)
	if !ok || rec.typ != recBOF {
		return nil, nil
	}
	var cells []biffCell
	depth := 1
	pending := -1 // the cell whose formula's text is in the next STRING record
	for depth > 0 {
		rec, next, ok := nextRecord(wb.stream, pos)
		if !ok {
			break
		}
		pos = next
		if len(cells) > maxBIFFCells {
			return nil, fmt.Errorf("more than %d cells in a sheet", maxBIFFCells)
		}
		switch rec.typ {
		case recBOF, 0x0009, 0x0209, 0x0409:
			depth++
		case recEOF:
			depth--
		case recString:
			var segs [][]byte
			segs, pos = continued(wb.stream, rec.data, pos)
			if depth == 1 && pending >= 0 {
				cells[pending].text, cells[pending].kind = textCell(wb.cellString(segs))
			}
			pending = -1
		case recNumber, recRK, recMulRK, recLabel, recRString, recLabelSST, recBoolErr, recFormula:
			if depth != 1 {
				continue
			}
			var segs [][]byte
			if rec.typ == recLabel || rec.typ == recRString {
				segs, pos = continued(wb.stream, rec.data, pos)
			}
			var textFollows bool
			cells, textFollows = wb.cellRecord(rec, segs, cells)
			pending = -1
			if textFollows {
				pending = len(cells) - 1
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b biffCell) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.col, b.col))
	})
	return cells, nil
}

// cellRecord appends the cells of one cell record. textFollows says the
// last cell is a formula whose text result is in the STRING record after
// it.
func (wb *biffBook) cellRecord(rec biffRecord, segs [][]byte, cells []biffCell) (out []biffCell, textFollows bool) {
	d := rec.data
	if len(d) < 6 {
		return cells, false
	}
	row, col, xf := int(binary.LittleEndian.Uint16(d)), int(binary.LittleEndian.Uint16(d[2:])), int(binary.LittleEndian.Uint16(d[4:]))
	// at(col)(text, kind) adds a cell in this record's row.
	at := func(col int) func(string, typing.CellKind) {
		return func(text string, kind typing.CellKind) {
			if kind != typing.KindEmpty {
				cells = append(cells, biffCell{row, col, text, kind})
			}
		}
	}
	switch rec.typ {
	case recNumber:
		if len(d) >= 14 {
			at(col)(wb.number(math.Float64frombits(binary.LittleEndian.Uint64(d[6:])), xf))
		}
	case recRK:
		if len(d) >= 10 {
			at(col)(wb.number(rkNumber(binary.LittleEndian.Uint32(d[6:])), xf))
		}
	case recMulRK:
		// Pairs of a style and an RK number, then the last column.
		for i := 4; i+6 <= len(d)-2; i += 6 {
			x := int(binary.LittleEndian.Uint16(d[i:]))
			at(col + (i-4)/6)(wb.number(rkNumber(binary.LittleEndian.Uint32(d[i+2:])), x))
		}
	case recLabel, recRString:
		segs[0] = segs[0][min(6, len(segs[0])):]
		at(col)(textCell(wb.cellString(segs)))
	case recLabelSST:
		if len(d) >= 10 {
			if i := int(binary.LittleEndian.Uint32(d[6:])); i >= 0 && i < len(wb.sst) {
				at(col)(textCell(wb.sst[i]))
			}
		}
	case recBoolErr:
		if len(d) >= 8 {
			at(col)(boolErr(d[6], d[7] != 0))
		}
	case recFormula:
		wb.formulas++
		if len(d) < 14 {
			return cells, false
		}
		r := d[6:14]
		if r[6] != 0xFF || r[7] != 0xFF {
			at(col)(wb.number(math.Float64frombits(binary.LittleEndian.Uint64(r)), xf))
			return cells, false
		}
		switch r[0] {
		case 0:
			return append(cells, biffCell{row: row, col: col}), true
		case 1:
			at(col)(boolErr(r[2], false))
		case 2:
			at(col)(boolErr(r[2], true))
		}
	}
	return cells, false
}

// cellString reads the string of a LABEL, RSTRING or STRING record and
// the CONTINUE records after it: a two-byte length, then unicode (BIFF8,
// split like shared strings) or code-page (BIFF5) characters.
func (wb *biffBook) cellString(segs [][]byte) string {
	if wb.biff8 {
		s, _ := (&sstReader{segs: segs}).str()
		return s
	}
	return wb.byteString(slices.Concat(segs...), 2)
}

// continued returns a record's data and that of the CONTINUE records right
// after it, and the position after them.
func continued(stream, data []byte, pos int) ([][]byte, int) {
	segs := [][]byte{data}
	for {
		c, after, ok := nextRecord(stream, pos)
		if !ok || c.typ != recContinue {
			return segs, pos
		}
		segs, pos = append(segs, c.data), after
	}
}

// number renders a number under the format of style xf.
func (wb *biffBook) number(v float64, xf int) (string, typing.CellKind) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", typing.KindEmpty
	}
	fk := fmtNumber
	if xf >= 0 && xf < len(wb.xfKinds) {
		fk = wb.xfKinds[xf]
	}
	return numberCell(v, fk, wb.date1904)
}

// rkNumber decodes an RK value: a 30-bit integer or the high 30 bits of a
// double, divided by 100 when bit 0 is set.
func rkNumber(rk uint32) float64 {
	var v float64
	if rk&2 != 0 {
		v = float64(int32(rk) >> 2)
	} else {
		v = math.Float64frombits(uint64(rk&0xFFFFFFFC) << 32)
	}
	if rk&1 != 0 {
		v /= 100
	}
	return v
}

func boolErr(v byte, isErr bool) (string, typing.CellKind) {
	if !isErr {
		return boolText(v != 0), typing.KindBool
	}
	if s, ok := biffErrors[v]; ok {
		return s, typing.KindError
	}
	return "#N/A", typing.KindError
}

// rows streams a sheet's rows.
func (wb *biffBook) rows(filename string, sh biffSheet) sheetRows {
	return func(yield func(int, []string, []typing.CellKind) error) error {
		cells, err := wb.sheetCells(sh.offset)
		if err != nil {
			return damagedSheet(filename, sh.name, err)
		}
		var (
			texts []string
			kinds []typing.CellKind
		)
		for i := 0; i < len(cells); {
			row := cells[i].row
			texts, kinds = texts[:0], kinds[:0]
			for ; i < len(cells) && cells[i].row == row; i++ {
				c := cells[i]
				if c.kind == typing.KindEmpty {
					continue
				}
				if c.col >= engine.MaxColumns {
					return tooWide(filename, sh.name, row+1, c.col+1)
				}
				for len(texts) <= c.col {
					texts, kinds = append(texts, ""), append(kinds, typing.KindEmpty)
				}
				texts[c.col], kinds[c.col] = c.text, c.kind
			}
			if len(texts) == 0 {
				continue
			}
			if err := yield(row+1, texts, kinds); err != nil {
				return err
			}
		}
		return nil
	}
}
