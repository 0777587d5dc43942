package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"datadesk/engine"
)

// A JSON array of records or NDJSON whose records are flat objects can be
// staged by DuckDB's read_json, which renders strings, booleans and whole
// numbers into VARCHAR exactly as the Go reader does. It re-renders other
// numbers from a double (1.50 becomes 1.5, 1e5 becomes 100000.0), so a
// file holding such a number goes through Go, as does anything else the
// two readers would not agree on. scanFlat decides this in one pass over
// the bytes, learning the keys in file order and each column's value
// kinds on the way.

// flatJSON is what scanFlat learned of a file of flat records.
type flatJSON struct {
	cols      []*jsonColumn
	maxRecord int
}

// byteScanner reads a file a buffer at a time.
type byteScanner struct {
	r    io.Reader
	buf  []byte
	pos  int
	end  int
	eof  bool
	read int64 // bytes consumed before buf
}

func (s *byteScanner) fill() bool {
	if s.eof {
		return false
	}
	s.read += int64(s.end)
	n, err := io.ReadFull(s.r, s.buf)
	s.pos, s.end = 0, n
	if err != nil {
		s.eof = true
	}
	return n > 0
}

// next returns the next byte, or false at the end of the file.
func (s *byteScanner) next() (byte, bool) {
	if s.pos == s.end && !s.fill() {
		return 0, false
	}
	c := s.buf[s.pos]
	s.pos++
	return c, true
}

// offset is the position of the next byte in the file.
func (s *byteScanner) offset() int64 { return s.read + int64(s.pos) }

// skipSpace returns the next byte that is not JSON whitespace, and
// whether a newline was skipped.
func (s *byteScanner) skipSpace() (c byte, newline, ok bool) {
	for {
		for s.pos < s.end {
			c = s.buf[s.pos]
			s.pos++
			switch c {
			case '\n':
				newline = true
			case ' ', '\t', '\r':
			default:
				return c, newline, true
			}
		}
		if !s.fill() {
			return 0, newline, false
		}
	}
}

// flatScan is the state of one scanFlat pass.
type flatScan struct {
	s       *byteScanner
	shape   jsonShape
	flat    flatJSON
	byKey   map[string]int
	lower   map[string]bool
	stamp   []int // the record that last set each column
	records int
	// next is the column after the record's last key: most files repeat
	// their keys in one order, and a comparison is cheaper than the map.
	next int
	str  []byte // the current string's bytes, escapes undone for keys
	// part marks a part of a file after its first, which may hold no
	// record.
	part bool
}

// scanFlat reads an array of records or NDJSON and reports whether DuckDB's
// reader can stage it with every value's text as written; a file it
// cannot read whole is left to the Go reader, which says what is wrong.
// A large file of records one per line is read in parts, one per core,
// each from the start of a line; the parts' columns are joined in file
// order, so the result is the one pass's.
func scanFlat(path string, shape jsonShape) (*flatJSON, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	parts := 1
	if shape == shapeLines && info.Size() >= minPartBytes {
		parts = min(runtime.GOMAXPROCS(0), maxParts)
	}
	return scanParts(f, info.Size(), shape, parts)
}

// scanParts is scanFlat of file f of size bytes in parts.
func scanParts(f *os.File, size int64, shape jsonShape, parts int) (*flatJSON, bool, error) {
	bounds, err := lineBounds(f, size, parts)
	if err != nil {
		return nil, false, err
	}
	scans := make([]*flatScan, len(bounds)-1)
	ok := make([]bool, len(scans))
	var wg sync.WaitGroup
	for i := range scans {
		sc := &flatScan{s: &byteScanner{r: io.NewSectionReader(f, bounds[i], bounds[i+1]-bounds[i]), buf: make([]byte, 1<<20)},
			shape: shape, byKey: map[string]int{}, lower: map[string]bool{}, part: i > 0}
		scans[i] = sc
		wg.Go(func() { ok[i] = sc.file() })
	}
	wg.Wait()
	out := &flatJSON{}
	byKey, lower := map[string]int{}, map[string]bool{}
	for i, sc := range scans {
		if !ok[i] {
			return nil, false, nil
		}
		out.maxRecord = max(out.maxRecord, sc.flat.maxRecord)
		for _, c := range sc.flat.cols {
			j, seen := byKey[c.label]
			if !seen {
				low := strings.ToLower(c.label)
				if len(out.cols) >= engine.MaxColumns || lower[low] {
					return nil, false, nil
				}
				lower[low], byKey[c.label], j = true, len(out.cols), len(out.cols)
				out.cols = append(out.cols, &jsonColumn{label: c.label})
			}
			for k, n := range c.kinds {
				out.cols[j].kinds[k] += n
			}
		}
	}
	if len(out.cols) == 0 {
		return nil, false, nil
	}
	return out, true, nil
}

// Files of records one per line of at least minPartBytes are read in up
// to maxParts parts.
const (
	minPartBytes = 16 << 20
	maxParts     = 8
)

// lineBounds splits a file of size bytes into parts that each start at
// the start of a line: the offsets of their starts, then size.
func lineBounds(f *os.File, size int64, parts int) ([]int64, error) {
	bounds := []int64{0}
	buf := make([]byte, 64<<10)
	for i := 1; i < parts; i++ {
		at := max(size*int64(i)/int64(parts), bounds[len(bounds)-1])
		for at < size {
			n, err := f.ReadAt(buf, at)
			if j := bytes.IndexByte(buf[:n], '\n'); j >= 0 {
				at += int64(j) + 1
				break
			}
			at += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		if at < size && at > bounds[len(bounds)-1] {
			bounds = append(bounds, at)
		}
	}
	return append(bounds, size), nil
}

// file reads the whole file: records, separators, nothing else.
func (sc *flatScan) file() bool {
	s := sc.s
	c, _, ok := s.skipSpace()
	if !ok {
		return sc.part
	}
	if sc.shape == shapeArray {
		if c != '[' {
			return false
		}
		if c, _, ok = s.skipSpace(); !ok {
			return false
		}
		if c == ']' {
			_, _, more := s.skipSpace()
			return !more
		}
		for {
			if !sc.record(c) {
				return false
			}
			if c, _, ok = s.skipSpace(); !ok {
				return false
			}
			if c == ']' {
				_, _, more := s.skipSpace()
				return !more
			}
			if c != ',' {
				return false
			}
			if c, _, ok = s.skipSpace(); !ok {
				return false
			}
		}
	}
	for {
		if !sc.record(c) {
			return false
		}
		var newline bool
		if c, newline, ok = s.skipSpace(); !ok {
			return true
		}
		// One record per line, as DuckDB's newline-delimited reader wants.
		if !newline {
			return false
		}
	}
}

// record reads one flat object whose '{' is c.
func (sc *flatScan) record(c byte) bool {
	s := sc.s
	if c != '{' {
		return false
	}
	start := s.offset() - 1
	sc.records++
	sc.next = 0
	c, ok := sc.space()
	if !ok {
		return false
	}
	if c != '}' {
		for {
			if c != '"' {
				return false
			}
			key, ok := sc.key()
			if !ok {
				return false
			}
			if c, ok = sc.space(); !ok || c != ':' {
				return false
			}
			if c, ok = sc.space(); !ok {
				return false
			}
			col := sc.column(key)
			if col < 0 || !sc.value(c, sc.flat.cols[col]) {
				return false
			}
			if c, ok = sc.space(); !ok {
				return false
			}
			if c == '}' {
				break
			}
			if c != ',' {
				return false
			}
			if c, ok = sc.space(); !ok {
				return false
			}
		}
	}
	size := s.offset() - start
	if size > 1<<30 {
		return false
	}
	sc.flat.maxRecord = max(sc.flat.maxRecord, int(size))
	return true
}

// space returns the next byte inside a record that is not whitespace;
// NDJSON records may not span lines.
func (sc *flatScan) space() (byte, bool) {
	// Most writers put no space between tokens.
	if s := sc.s; s.pos < s.end && s.buf[s.pos] > ' ' {
		s.pos++
		return s.buf[s.pos-1], true
	}
	c, newline, ok := sc.s.skipSpace()
	return c, ok && !(newline && sc.shape == shapeLines)
}

// column returns the column of key, adding it when new; -1 when the
// record repeats the key, or when the keys would make too many columns
// or two that differ only in case (DuckDB's column names ignore case).
func (sc *flatScan) column(key []byte) int {
	i, ok := sc.next, sc.next < len(sc.flat.cols) && sc.flat.cols[sc.next].label == string(key)
	if !ok {
		i, ok = sc.byKey[string(key)]
	}
	if !ok {
		k := string(key)
		low := strings.ToLower(k)
		if len(sc.flat.cols) >= engine.MaxColumns || sc.lower[low] {
			return -1
		}
		sc.lower[low] = true
		i = len(sc.flat.cols)
		sc.byKey[k] = i
		sc.flat.cols = append(sc.flat.cols, &jsonColumn{label: k})
		sc.stamp = append(sc.stamp, 0)
	}
	if sc.stamp[i] == sc.records {
		return -1
	}
	sc.stamp[i] = sc.records
	sc.next = i + 1
	return i
}

// key reads a key after its opening quote, escapes undone; stringBytes
// has checked its UTF-8.
func (sc *flatScan) key() ([]byte, bool) {
	sc.str = sc.str[:0]
	escaped, ok := sc.stringBytes(true)
	if !ok {
		return nil, false
	}
	if escaped {
		var k string
		if json.Unmarshal(append(append([]byte{'"'}, sc.str...), '"'), &k) != nil {
			return nil, false
		}
		sc.str = append(sc.str[:0], k...)
	}
	return sc.str, true
}

// stringBytes reads a string after its opening quote; with keep, its raw
// bytes go to sc.str. It refuses strings the two readers could read
// differently: invalid UTF-8, lone surrogate escapes, control characters,
// and strings longer than a cell may be.
func (sc *flatScan) stringBytes(keep bool) (escaped, ok bool) {
	// Most strings are plain ASCII, whole in the buffer.
	s := sc.s
	i := plainRun(s.buf[:s.end], s.pos)
	if i < s.end && s.buf[i] == '"' && i-s.pos <= engine.MaxCellChars {
		if keep {
			sc.str = append(sc.str, s.buf[s.pos:i]...)
		}
		s.pos = i + 1
		return false, true
	}
	return sc.anyString(keep)
}

// anyString is stringBytes of any string.
func (sc *flatScan) anyString(keep bool) (escaped, ok bool) {
	s := sc.s
	n := 0
	var runeBuf [utf8.UTFMax]byte
	pending := runeBuf[:0]
	for {
		// A run of plain ASCII is taken at once.
		if s.pos == s.end && !s.fill() {
			return false, false
		}
		i := plainRun(s.buf[:s.end], s.pos)
		if i > s.pos {
			if len(pending) > 0 {
				return false, false
			}
			if n += i - s.pos; n > engine.MaxCellChars {
				return false, false
			}
			if keep {
				sc.str = append(sc.str, s.buf[s.pos:i]...)
			}
			// Most strings end with the run.
			if i < s.end && s.buf[i] == '"' {
				s.pos = i + 1
				return escaped, true
			}
			s.pos = i
			continue
		}
		c, ok := s.next()
		if !ok || c < 0x20 {
			return false, false
		}
		n++
		if n > engine.MaxCellChars {
			return false, false
		}
		if c >= 0x80 {
			// Non-ASCII bytes are checked a character at a time.
			pending = append(pending, c)
			if utf8.FullRune(pending) {
				if r, _ := utf8.DecodeRune(pending); r == utf8.RuneError {
					return false, false
				}
				pending = pending[:0]
			} else if len(pending) == utf8.UTFMax {
				return false, false
			}
		} else if len(pending) > 0 {
			return false, false
		}
		if keep {
			sc.str = append(sc.str, c)
		}
		switch c {
		case '"':
			if keep {
				sc.str = sc.str[:len(sc.str)-1]
			}
			return escaped, true
		case '\\':
			escaped = true
			if !sc.escape(keep) {
				return false, false
			}
		}
	}
}

// escape reads an escape after its backslash, refusing an unknown one
// and a lone surrogate; with keep, its bytes go to sc.str.
func (sc *flatScan) escape(keep bool) bool {
	s := sc.s
	e, ok := s.next()
	if !ok {
		return false
	}
	if keep {
		sc.str = append(sc.str, e)
	}
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		var hex [4]byte
		for i := range hex {
			if hex[i], ok = s.next(); !ok {
				return false
			}
		}
		if keep {
			sc.str = append(sc.str, hex[:]...)
		}
		v, ok := hexValue(hex)
		return ok && (v < 0xD800 || v > 0xDFFF)
	}
	return false
}

// plainByte marks the bytes a string's run of plain ASCII may hold: not
// a quote, a backslash, a control character or a byte of a multi-byte
// character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the end of the run of plain bytes (plainByte) of b
// from i, eight bytes at a time while none of them ends it.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// A byte below 0x20, from 0x80, a quote or a backslash: each test
		// sets the high bit of a byte that fails it (a zero byte test).
		quote, slash := x^(ones*'"'), x^(ones*'\\')
		if (x-ones*0x20|x|(quote-ones)&^quote|(slash-ones)&^slash)&highs != 0 {
			break
		}
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	return i
}

func hexValue(h [4]byte) (int, bool) {
	v := 0
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// value reads one value whose first byte is c into col's kinds.
func (sc *flatScan) value(c byte, col *jsonColumn) bool {
	s := sc.s
	switch {
	case c == '"':
		if _, ok := sc.stringBytes(false); !ok {
			return false
		}
		col.kinds[kindString]++
		return true
	case c == 't' || c == 'f' || c == 'n':
		word := "ull"
		switch c {
		case 't':
			word = "rue"
		case 'f':
			word = "alse"
		}
		for i := 0; i < len(word); i++ {
			if b, ok := s.next(); !ok || b != word[i] {
				return false
			}
		}
		if c == 'n' {
			col.kinds[kindNull]++
		} else {
			col.kinds[kindBool]++
		}
		return sc.delimited()
	case c == '-' || c >= '0' && c <= '9':
		num := append(sc.str[:0], c)
		for {
			if s.pos == s.end && !s.fill() {
				break
			}
			b := s.buf[s.pos]
			if !(b >= '0' && b <= '9' || b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-') {
				break
			}
			s.pos++
			if num = append(num, b); len(num) > 64 {
				return false
			}
		}
		sc.str = num
		if !keptNumber(num) {
			return false
		}
		col.kinds[kindNumber]++
		return true
	}
	// Nested objects and arrays: the Go reader writes them back its own way.
	return false
}

// delimited reports whether the next byte may end a literal.
func (sc *flatScan) delimited() bool {
	s := sc.s
	if s.pos == s.end && !s.fill() {
		return true
	}
	switch s.buf[s.pos] {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// keptNumber reports whether a JSON number is valid and read_json renders
// it into VARCHAR with exactly its written text: a whole number other than
// -0 (read as an integer, or raw when too big), or a decimal of at most 15
// significant digits, no exponent, no trailing zero after the first
// decimal, and at most three zeros after the point before the first other
// digit (a smaller number is rendered with an exponent).
func keptNumber(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	ip, fr, hasPoint := bytes.Cut(digits, []byte{'.'})
	if len(ip) == 0 || !allDigits(ip) || len(ip) > 1 && ip[0] == '0' {
		return false
	}
	if !hasPoint {
		return string(b) != "-0"
	}
	if len(fr) == 0 || !allDigits(fr) || len(fr) > 1 && fr[len(fr)-1] == '0' {
		return false
	}
	sig := len(ip) + len(fr)
	if string(ip) == "0" {
		lead := len(fr) - len(bytes.TrimLeft(fr, "0"))
		if lead > 3 && lead < len(fr) {
			return false
		}
		sig = len(fr) - lead
	}
	return sig <= 15
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
