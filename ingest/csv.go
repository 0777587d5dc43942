package ingest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"datadesk"
	"datadesk/engine/typing"
)

// maxRejectSamples is how many rejected rows a report lists by line.
const maxRejectSamples = 20

// textEncoding finds how a text file is encoded: a BOM decides; without one,
// NUL bytes in every other place mean UTF-16, valid UTF-8 means UTF-8, and
// anything else is read as Windows-1252 (Latin-1 with printable characters
// where Latin-1 has C1 controls).
func textEncoding(head []byte) (encoding.Encoding, string) {
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8BOM, "UTF-8 with BOM"
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "UTF-16LE"
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "UTF-16BE"
	}
	if len(head) >= 4 {
		var even, odd int
		for i, b := range head {
			if b == 0 {
				if i%2 == 0 {
					even++
				} else {
					odd++
				}
			}
		}
		half := len(head) / 2
		if odd > half*3/4 {
			return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "UTF-16LE"
		}
		if even > half*3/4 {
			return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), "UTF-16BE"
		}
	}
	valid := head
	for i := 0; i < utf8.UTFMax && len(valid) > 0 && !utf8.Valid(valid); i++ {
		valid = valid[:len(valid)-1] // the sample may end inside a character
	}
	if utf8.Valid(valid) {
		return unicode.UTF8, "UTF-8"
	}
	return charmap.Windows1252, "Latin-1 (Windows-1252)"
}

// lineLimit fails a read once a record grows past max bytes: encoding/csv
// would otherwise grow one field without bound. It follows quoting as
// encoding/csv does with LazyQuotes (a quote opens a field only at its
// start; in a quoted field "" is a quote and a quote closes it only before
// a delimiter or line end), so a newline inside a quoted field does not end
// the record and one quoted field of many lines is bounded too.
type lineLimit struct {
	r     io.Reader
	max   int
	run   int
	line  int64
	comma byte
	// quoted: inside a quoted field; closing: a quote was just seen there;
	// started: the byte before was the start of a field.
	quoted, closing, started bool
}

var errLineTooLong = errors.New("line too long")

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if l.quoted && l.closing {
			l.closing = false
			if b != '"' && (b == l.comma || b == '\n' || b == '\r') {
				l.quoted = false
			}
		} else if b == '"' {
			if l.quoted {
				l.closing = true
			} else if l.started {
				l.quoted = true
			}
		}
		l.started = !l.quoted && (b == l.comma || b == '\n')
		if b == '\n' {
			l.line++
			if !l.quoted {
				l.run = 0
				continue
			}
		}
		l.run++
		if l.run > l.max {
			return 0, errLineTooLong
		}
	}
	return n, err
}

// sniffDelimiter picks the delimiter that splits the first lines into the
// most columns, consistently.
func sniffDelimiter(text string) rune {
	best, bestScore := ',', 0
	if i := strings.LastIndexByte(text, '\n'); i > 0 {
		text = text[:i] // the sample may end mid-record
	}
	for _, d := range []rune{',', ';', '\t', '|'} {
		r := csv.NewReader(strings.NewReader(text))
		r.Comma, r.LazyQuotes, r.FieldsPerRecord = d, true, -1
		first, err := r.Read()
		if err != nil || len(first) < 2 {
			continue
		}
		score := len(first)
		for i := 0; i < 30; i++ {
			rec, err := r.Read()
			if err != nil {
				break
			}
			if len(rec) == len(first) {
				score += len(first)
			}
		}
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

// csvFile is a CSV file open for reading: its records, and its lines,
// which say where a read stopped.
type csvFile struct {
	f  io.Closer
	r  *csv.Reader
	ll *lineLimit
}

func (c *csvFile) Close() error { return c.f.Close() }

// openCSV opens a CSV file for reading as text in its encoding, in lines
// no longer than the ingester allows, as records split by delim (quotes
// read leniently, any number of fields a record). The caller closes it.
func (in *Ingester) openCSV(path string, head []byte, delim rune) (*csvFile, error) {
	enc, _ := textEncoding(head)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	var text io.Reader = transform.NewReader(f, enc.NewDecoder())
	if decoded, _, _ := transform.Bytes(enc.NewDecoder(), head); crLines(decoded) {
		text = crToLF{text}
	}
	ll := &lineLimit{r: text, max: in.cfg.MaxLine, line: 1, comma: byte(delim), started: true}
	r := csv.NewReader(ll)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = delim, true, -1
	return &csvFile{f: f, r: r, ll: ll}, nil
}

// crLines says whether decoded text, a file's head, ends its lines with
// a carriage return alone, as classic Mac OS did and Excel's "CSV
// (Macintosh)" still does: it has carriage returns and no line feed.
// Read as it is, such a file is one line: its header and every row one
// header of many columns, and no rows.
func crLines(decoded []byte) bool {
	return bytes.IndexByte(decoded, '\n') < 0 && bytes.IndexByte(decoded, '\r') >= 0
}

// crToLF reads a file of carriage-return lines as line-feed ones.
type crToLF struct{ r io.Reader }

func (c crToLF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// checkQuotedFields refuses a file with a quoted field longer than the
// line limit, following quotes as lineLimit does (a quote opens a field
// only at its start; "" inside is a quote) but jumping from quote to
// quote: a file without quotes is read at memory speed.
func (in *Ingester) checkQuotedFields(path, name string, delim byte) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var (
		off     int64 // of buf[0] in the file
		quoted  bool
		closing bool // inside, a quote was the last byte seen
		opened  int64
		prev    byte = '\n'
	)
	for {
		n, rerr := io.ReadFull(f, buf)
		chunk := buf[:n]
		for i := 0; i < len(chunk); {
			if closing {
				closing = false
				if chunk[i] == '"' {
					i++
					prev = '"'
					continue
				}
				quoted = false
			}
			j := bytes.IndexByte(chunk[i:], '"')
			if j < 0 {
				if !quoted && n > 0 {
					prev = chunk[len(chunk)-1]
				}
				break
			}
			q := i + j
			if j > 0 {
				prev = chunk[q-1]
			}
			switch {
			case quoted:
				closing = true
			case prev == delim || prev == '\n' || prev == '\r':
				quoted, opened = true, off+int64(q)
			}
			if quoted && off+int64(q)-opened > int64(in.cfg.MaxLine) {
				return in.longFieldError(path, name, opened)
			}
			prev = '"'
			i = q + 1
		}
		if quoted && off+int64(n)-opened > int64(in.cfg.MaxLine) {
			return in.longFieldError(path, name, opened)
		}
		off += int64(n)
		if rerr != nil {
			return nil
		}
	}
}

// longFieldError names the line where a field too long to read starts.
func (in *Ingester) longFieldError(path, name string, at int64) error {
	line := int64(1)
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		buf := make([]byte, 1<<20)
		for read := int64(0); read < at; {
			n, err := f.Read(buf[:min(int64(len(buf)), at-read)])
			line += int64(bytes.Count(buf[:n], []byte{'\n'}))
			read += int64(n)
			if err != nil {
				break
			}
		}
	}
	return datadesk.Errorf(datadesk.Invalid, "%s: the quoted field that starts on line %d is longer than %d bytes", name, line, in.cfg.MaxLine).WithField("file")
}

// textKind is the kind a cell's text would have in a spreadsheet: a
// number (not a code with a leading zero), an ISO date or a year and
// month (1953-04), an ISO date and time, or text.
func textKind(v string) typing.CellKind {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return typing.KindEmpty
	case len(v) > 1 && v[0] == '0' && v[1] != '.':
		return typing.KindText
	}
	if c := v[0]; c != '-' && c != '.' && c != '+' && (c < '0' || c > '9') {
		return typing.KindText
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return typing.KindNumber
	}
	for _, layout := range []string{"2006-01-02", "2006-01"} {
		if _, err := time.Parse(layout, v); err == nil {
			return typing.KindDate
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if _, err := time.Parse(layout, v); err == nil {
			return typing.KindDateTime
		}
	}
	return typing.KindText
}

// textKinds are the kinds of a record's cells (textKind).
func textKinds(rec []string) []typing.CellKind {
	kinds := make([]typing.CellKind, len(rec))
	for i, v := range rec {
		kinds[i] = textKind(v)
	}
	return kinds
}

func (in *Ingester) csvHeader(path string, head []byte, delim rune) ([]string, error) {
	f, err := in.openCSV(path, head, delim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, ll := f.r, f.ll
	rec, err := r.Read()
	if err == io.EOF {
		return nil, datadesk.Errorf(datadesk.Invalid, "the file is empty: a header row is needed").WithField("file")
	}
	if err != nil {
		return nil, csvError("file", ll, err)
	}
	return rec, nil
}

func csvError(name string, ll *lineLimit, err error) error {
	if errors.Is(err, errLineTooLong) {
		return datadesk.Errorf(datadesk.Invalid, "%s: line %d is longer than %d bytes", name, ll.line, ll.max).WithField("file")
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return datadesk.Errorf(datadesk.Invalid, "%s: line %d: %v", name, pe.Line, pe.Err).WithField("file")
	}
	return datadesk.Errorf(datadesk.Invalid, "%s could not be read as text", name).WithField("file").WithCause(err)
}

func delimName(d rune) string {
	switch d {
	case '\t':
		return "tab"
	case ',':
		return "comma"
	case ';':
		return "semicolon"
	case '|':
		return "pipe"
	}
	return string(d)
}
