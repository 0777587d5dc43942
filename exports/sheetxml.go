package exports

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// rowXML appends worksheet rows as the XML excelize's StreamWriter writes
// for the same values: a row element numbered r, each cell with its
// reference, style and type, numbers as their shortest text cut to the 15
// significant digits Excel keeps, booleans as 1 or 0, text inline. It
// writes at the speed of appending bytes, where the StreamWriter builds a
// struct per cell.
type rowXML struct {
	cols []string // column letters, A, B, ...
}

func newRowXML(n int) (*rowXML, error) {
	x := &rowXML{cols: make([]string, n)}
	for i := range x.cols {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return nil, err
		}
		x.cols[i] = name
	}
	return x, nil
}

// appendRow appends row r's cells, each as xlsxCell made it.
func (x *rowXML) appendRow(b []byte, r int, cells []any) []byte {
	b = append(b, `<row r="`...)
	b = strconv.AppendInt(b, int64(r), 10)
	b = append(b, `">`...)
	for i, v := range cells {
		style := 0
		if c, ok := v.(excelize.Cell); ok {
			style, v = c.StyleID, c.Value
		}
		if v == nil {
			continue
		}
		b = x.appendCell(b, i, r, style, v)
	}
	return append(b, `</row>`...)
}

func (x *rowXML) appendCell(b []byte, col, r, style int, v any) []byte {
	switch v := v.(type) {
	case int64:
		b = append(x.open(b, col, r, style, ""), `<v>`...)
		b = strconv.AppendInt(b, v, 10)
		return append(b, `</v></c>`...)
	case float64:
		b = append(x.open(b, col, r, style, ""), `<v>`...)
		b = appendExcelFloat(b, v)
		return append(b, `</v></c>`...)
	case bool:
		b = append(x.open(b, col, r, style, "b"), `<v>`...)
		if v {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
		return append(b, `</v></c>`...)
	case string:
		return x.appendInlineString(b, col, r, style, v)
	}
	return x.appendInlineString(b, col, r, style, fmt.Sprint(v))
}

// open appends a cell's start tag.
func (x *rowXML) open(b []byte, col, r, style int, typ string) []byte {
	b = append(b, `<c r="`...)
	b = append(b, x.cols[col]...)
	b = strconv.AppendInt(b, int64(r), 10)
	b = append(b, '"')
	if style != 0 {
		b = append(b, ` s="`...)
		b = strconv.AppendInt(b, int64(style), 10)
		b = append(b, '"')
	}
	if typ != "" {
		b = append(b, ` t="`...)
		b = append(b, typ...)
		b = append(b, '"')
	}
	return append(b, '>')
}

// appendInlineString writes text as an inline string: at most Excel's
// 32,767 UTF-16 units, xml:space kept when it starts or ends with white
// space, escaped for XML (line feeds as they are), and with the OOXML
// escape _xHHHH_ escaped where the text holds one, so that it reads back
// as written.
func (x *rowXML) appendInlineString(b []byte, col, r, style int, s string) []byte {
	s = cutUTF16(s, MaxCellChars)
	preserve := false
	if s != "" {
		switch s[0] {
		case '\t', '\n', '\r', ' ':
			preserve = true
		}
		switch s[len(s)-1] {
		case '\t', '\n', '\r', ' ':
			preserve = true
		}
	}
	b = append(x.open(b, col, r, style, "inlineStr"), `<is><t`...)
	if preserve {
		b = append(b, ` xml:space="preserve"`...)
	}
	b = append(b, '>')
	b = appendEscapedText(b, s)
	return append(b, `</t></is></c>`...)
}

// cutUTF16 cuts s to at most n UTF-16 units, as Excel counts a cell.
func cutUTF16(s string, n int) string {
	if len(s) <= n {
		return s
	}
	units := 0
	for i, r := range s {
		if units += utf16.RuneLen(r); units > n {
			return s[:i]
		}
	}
	return s
}

// appendEscapedText appends s escaped as encoding/xml's EscapeText does
// (quotes, ampersands, angle brackets, tabs and carriage returns as
// references, a character XML cannot hold as U+FFFD) but line feeds as
// they are; an OOXML escape _xHHHH_ in s gets its underscore escaped.
func appendEscapedText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, "&#34;"...)
			case '\'':
				b = append(b, "&#39;"...)
			case '&':
				b = append(b, "&amp;"...)
			case '<':
				b = append(b, "&lt;"...)
			case '>':
				b = append(b, "&gt;"...)
			case '\t':
				b = append(b, "&#x9;"...)
			case '\r':
				b = append(b, "&#xD;"...)
			case '\n':
				b = append(b, '\n')
			case '_':
				if ooxmlEscapeAt(s, i) {
					b = append(b, "_x005F"...)
				}
				b = append(b, '_')
			default:
				if c < 0x20 {
					b = append(b, "\uFFFD"...)
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !xmlAllowed(r) {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// ooxmlEscapeAt reports whether s holds _xHHHH_ at i.
func ooxmlEscapeAt(s string, i int) bool {
	if i+7 > len(s) || s[i+1] != 'x' || s[i+6] != '_' {
		return false
	}
	for _, c := range []byte(s[i+2 : i+6]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func xmlAllowed(r rune) bool {
	return r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// appendExcelFloat appends f as its shortest decimal text, cut (not
// rounded) to the 15 significant digits Excel keeps, as excelize writes
// numbers.
func appendExcelFloat(b []byte, f float64) []byte {
	start := len(b)
	if math.Abs(f) == math.MaxFloat64 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	s := b[start:]
	const keep = 15
	significant, point := 0, -1
	for i, c := range s {
		if c == '.' {
			point = i
			continue
		}
		if c < '0' || c > '9' || significant == 0 && c == '0' {
			continue
		}
		if significant++; significant <= keep {
			continue
		}
		if point >= 0 {
			// Past the point: the digits from here go, and a point
			// left last.
			end := start + i
			if b[end-1] == '.' {
				end--
			}
			return b[:end]
		}
		// Before the point: they become zeros and the fraction goes.
		end := bytes.IndexByte(s, '.')
		if end < 0 {
			end = len(s)
		}
		for j := i; j < end; j++ {
			s[j] = '0'
		}
		return b[:start+end]
	}
	return b
}
