package ingest

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf16"

	"github.com/richardlehane/mscfb"
)

// BIFF record types read here.
const (
	recBOF        = 0x0809
	recEOF        = 0x000A
	recBoundSheet = 0x0085
	recFormula    = 0x0006
	recString     = 0x0207
	recFilePass   = 0x002F
)

// readOLE opens an OLE compound file and returns whether it holds an
// encrypted OOXML package, and the first limit bytes of its BIFF workbook
// stream, if it has one.
func readOLE(path string, limit int64) (encrypted bool, workbook []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	doc, err := mscfb.New(f)
	if err != nil {
		return false, nil, err
	}
	for entry, err := doc.Next(); err == nil; entry, err = doc.Next() {
		switch entry.Name {
		case "EncryptionInfo", "EncryptedPackage":
			return true, nil, nil
		case "Workbook", "Book":
			buf := make([]byte, min(entry.Size, limit))
			n, _ := io.ReadFull(entry, buf)
			return false, buf[:n], nil
		}
	}
	return false, nil, nil
}

// workbookStream returns the BIFF workbook stream of an OLE file, at most
// maxBIFFScan bytes of it.
func workbookStream(path string) ([]byte, error) {
	_, wb, err := readOLE(path, maxBIFFScan)
	if err == nil && wb == nil {
		err = io.ErrUnexpectedEOF
	}
	return wb, err
}

type cellPos struct{ row, col int }

// biffErrors are the error values a formula can result in, as Excel shows
// them.
var biffErrors = map[byte]string{0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!", 0x2A: "#N/A"}

// formulaResults reads the cached result of every FORMULA record, per sheet
// in workbook order: the pure-Go readers leave those cells empty. A record
// it cannot read is skipped; the function never panics past its caller.
func formulaResults(stream []byte) (sheets []map[cellPos]string, total int) {
	defer func() {
		if recover() != nil {
			sheets = nil
		}
	}()
	// BOUNDSHEET records in the globals give each sheet's offset.
	var offsets []int
	b := stream
	for pos := 0; pos+4 <= len(b); {
		typ := binary.LittleEndian.Uint16(b[pos:])
		size := int(binary.LittleEndian.Uint16(b[pos+2:]))
		if pos+4+size > len(b) {
			break
		}
		body := b[pos+4 : pos+4+size]
		if typ == recBoundSheet && size >= 6 {
			offsets = append(offsets, int(binary.LittleEndian.Uint32(body)))
		}
		if typ == recEOF {
			break
		}
		pos += 4 + size
	}
	for _, off := range offsets {
		cells := map[cellPos]string{}
		pending := cellPos{-1, -1}
		for pos := off; pos+4 <= len(b); {
			typ := binary.LittleEndian.Uint16(b[pos:])
			size := int(binary.LittleEndian.Uint16(b[pos+2:]))
			if pos+4+size > len(b) {
				break
			}
			body := b[pos+4 : pos+4+size]
			pos += 4 + size
			switch typ {
			case recFormula:
				total++
				if size < 14 {
					continue
				}
				at := cellPos{int(binary.LittleEndian.Uint16(body)), int(binary.LittleEndian.Uint16(body[2:]))}
				num := body[6:14]
				if num[6] == 0xFF && num[7] == 0xFF {
					switch num[0] {
					case 0: // a string, in the STRING record that follows
						pending = at
					case 1:
						cells[at] = strconv.FormatBool(num[2] != 0)
					case 2:
						cells[at] = biffErrors[num[2]]
					case 3:
						cells[at] = ""
					}
					continue
				}
				v := math.Float64frombits(binary.LittleEndian.Uint64(num))
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					cells[at] = strconv.FormatFloat(v, 'f', -1, 64)
				}
			case recString:
				if pending.row >= 0 && size >= 3 {
					cells[pending] = biffString(body)
				}
				pending = cellPos{-1, -1}
			case recEOF:
				pos = len(b)
			}
		}
		sheets = append(sheets, cells)
	}
	return sheets, total
}

// biffString reads a BIFF8 unicode string: a character count, a flags byte
// (bit 0: two bytes a character) and the characters.
func biffString(body []byte) string {
	n := int(binary.LittleEndian.Uint16(body))
	wide := body[2]&1 == 1
	data := body[3:]
	if !wide {
		if n > len(data) {
			n = len(data)
		}
		r := make([]rune, n)
		for i := 0; i < n; i++ {
			r[i] = rune(data[i])
		}
		return string(r)
	}
	if 2*n > len(data) {
		n = len(data) / 2
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(data[2*i:])
	}
	return string(utf16.Decode(u))
}
