package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// xmlScanner reads the tokens of an XML stream as encoding/xml's RawToken
// gives them (no namespace resolution, no start and end matching) at the
// speed a worksheet of millions of cells needs: names and text are slices
// of its buffer, valid until the next call, and text is decoded only when
// asked for. It keeps what a reader of worksheets sees of encoding/xml:
// the five entities and character references, CDATA, line ends turned
// into "\n", comments, processing instructions and directives skipped,
// and an error for a cut or malformed tag, an unknown entity, or text that
// is not UTF-8 or holds a character XML forbids.
type xmlScanner struct {
	r   io.Reader
	buf []byte
	pos int
	end int
	eof bool

	// The token read last.
	kind      xmlKind
	name      []byte // a tag's local name (after any prefix)
	attrs     []byte // a start tag's attributes, raw
	selfClose bool   // a start tag that ends itself (<c/>)
	text      []byte // text, raw: entities not yet decoded
	cdata     bool   // text from a CDATA section: taken as it is
}

type xmlKind int

const (
	xmlStart xmlKind = iota + 1
	xmlEnd
	xmlText
)

const (
	// xmlChunk is how much is read at a time.
	xmlChunk = 256 << 10
	// xmlMaxToken bounds one tag, comment or text run held whole; text
	// longer than that comes in pieces.
	xmlMaxToken = 4 << 20
)

var errXMLCut = errors.New("the XML ends inside a tag")

func newXMLScanner(r io.Reader) *xmlScanner {
	return &xmlScanner{r: r, buf: make([]byte, xmlChunk)}
}

// fill reads more after what is unread, moving it to the buffer's start
// and growing the buffer when it is full. It reports whether anything
// more came.
func (s *xmlScanner) fill() (bool, error) {
	if s.eof {
		return false, nil
	}
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= xmlMaxToken+xmlChunk {
			return false, fmt.Errorf("an XML token longer than %d bytes", xmlMaxToken)
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	n, err := io.ReadAtLeast(s.r, s.buf[s.end:], 1)
	s.end += n
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		s.eof = true
	case err != nil:
		return n > 0, err
	}
	return n > 0, nil
}

// find returns the index, from s.pos+from, of sep in the unread bytes,
// reading more as needed; -1 at the end of the stream.
func (s *xmlScanner) find(from int, sep []byte) (int, error) {
	for {
		if i := bytes.Index(s.buf[s.pos+from:s.end], sep); i >= 0 {
			return from + i, nil
		}
		from = max(s.end-s.pos-len(sep)+1, from)
		more, err := s.fill()
		if err != nil {
			return -1, err
		}
		if !more {
			return -1, nil
		}
	}
}

// ensure makes at least n bytes unread, or reports that the stream ends
// first.
func (s *xmlScanner) ensure(n int) (bool, error) {
	for s.end-s.pos < n {
		more, err := s.fill()
		if err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// next reads the next token; io.EOF at the end of the stream.
func (s *xmlScanner) next() error {
	for {
		if ok, err := s.ensure(1); err != nil {
			return err
		} else if !ok {
			return io.EOF
		}
		if s.buf[s.pos] != '<' {
			return s.readText()
		}
		if ok, err := s.ensure(2); err != nil {
			return err
		} else if !ok {
			return errXMLCut
		}
		switch s.buf[s.pos+1] {
		case '/':
			return s.readEnd()
		case '?':
			if err := s.skipPast(2, "?>"); err != nil {
				return err
			}
			continue
		case '!':
			done, err := s.readBang()
			if err != nil || done {
				return err
			}
			continue
		}
		return s.readStart()
	}
}

// skipPast skips to just after sep, looked for from s.pos+from.
func (s *xmlScanner) skipPast(from int, sep string) error {
	i, err := s.find(from, []byte(sep))
	if err != nil {
		return err
	}
	if i < 0 {
		return errXMLCut
	}
	s.pos += i + len(sep)
	return nil
}

// readBang reads what starts with "<!": a comment or directive (skipped:
// done is false) or a CDATA section (a text token).
func (s *xmlScanner) readBang() (done bool, err error) {
	if _, err := s.ensure(9); err != nil {
		return false, err
	}
	rest := s.buf[s.pos:s.end]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		return false, s.skipPast(4, "-->")
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		i, err := s.find(9, []byte("]]>"))
		if err != nil {
			return false, err
		}
		if i < 0 {
			return false, errXMLCut
		}
		s.kind, s.text, s.cdata = xmlText, s.buf[s.pos+9:s.pos+i], true
		s.pos += i + 3
		return true, nil
	}
	// A directive (<!DOCTYPE ...>), read as encoding/xml does: its first
	// byte as it is, then angle brackets nest, quoted ones do not count,
	// and comments are skipped.
	depth, quote := 0, byte(0)
	for i := 3; ; i++ {
		if ok, err := s.ensure(i + 1); err != nil {
			return false, err
		} else if !ok {
			return false, errXMLCut
		}
		switch c := s.buf[s.pos+i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '>':
			if depth == 0 {
				s.pos += i + 1
				return false, nil
			}
			depth--
		case c == '<':
			if ok, err := s.ensure(i + 4); err != nil {
				return false, err
			} else if ok && bytes.HasPrefix(s.buf[s.pos+i:s.end], []byte("<!--")) {
				j, err := s.find(i+4, []byte("-->"))
				if err != nil {
					return false, err
				}
				if j < 0 {
					return false, errXMLCut
				}
				i = j + 2
				continue
			}
			depth++
		}
	}
}

// readText reads the text up to the next tag, or a piece of it when it
// is longer than xmlMaxToken.
func (s *xmlScanner) readText() error {
	from := 0
	for {
		if i := bytes.IndexByte(s.buf[s.pos+from:s.end], '<'); i >= 0 {
			return s.emitText(from + i)
		}
		from = s.end - s.pos
		if from > xmlMaxToken {
			return s.emitText(textPiece(s.buf[s.pos : s.pos+xmlMaxToken+1]))
		}
		more, err := s.fill()
		if err != nil {
			return err
		}
		if !more {
			return s.emitText(s.end - s.pos)
		}
	}
}

func (s *xmlScanner) emitText(n int) error {
	s.kind, s.text, s.cdata = xmlText, s.buf[s.pos:s.pos+n], false
	s.pos += n
	return nil
}

// textPiece is where to cut a long text run before b's last byte: not
// inside an entity, a "\r\n" or a character's bytes.
func textPiece(b []byte) int {
	n := len(b) - 1
	if amp := bytes.LastIndexByte(b, '&'); amp > 0 && amp > n-12 {
		n = amp
	}
	for n > 1 && (b[n-1] == '\r' || b[n]&0xC0 == 0x80) {
		n--
	}
	return n
}

// readEnd reads an end tag.
func (s *xmlScanner) readEnd() error {
	i, err := s.find(2, []byte{'>'})
	if err != nil {
		return err
	}
	if i < 0 {
		return errXMLCut
	}
	name := trimSpaceRight(s.buf[s.pos+2 : s.pos+i])
	if len(name) == 0 {
		return fmt.Errorf("an end tag without a name")
	}
	s.kind, s.name = xmlEnd, localName(name)
	s.pos += i + 1
	return nil
}

// readStart reads a start tag: its name and its attributes, whose quoted
// values may hold '>'.
func (s *xmlScanner) readStart() error {
	i := 1
	quote := byte(0)
	nameEnd := -1
	for {
		if s.pos+i >= s.end {
			more, err := s.fill()
			if err != nil {
				return err
			}
			if !more {
				return errXMLCut
			}
			continue
		}
		c := s.buf[s.pos+i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			tag := s.buf[s.pos+1 : s.pos+i]
			s.selfClose = len(tag) > 0 && tag[len(tag)-1] == '/'
			if s.selfClose {
				tag = tag[:len(tag)-1]
			}
			if nameEnd < 0 || nameEnd > len(tag) {
				nameEnd = len(tag)
			}
			if nameEnd == 0 {
				return fmt.Errorf("a tag without a name")
			}
			s.kind, s.name, s.attrs = xmlStart, localName(tag[:nameEnd]), tag[nameEnd:]
			s.pos += i + 1
			return nil
		case nameEnd < 0 && (isSpace(c) || c == '/'):
			nameEnd = i - 1
		}
		i++
	}
}

// localName is a name without its prefix, split as encoding/xml splits
// it: at a single colon with a name on each side.
func localName(name []byte) []byte {
	i := bytes.IndexByte(name, ':')
	if i <= 0 || i == len(name)-1 || bytes.IndexByte(name[i+1:], ':') >= 0 {
		return name
	}
	return name[i+1:]
}

// attr returns the raw value of the unprefixed attribute name of the start
// tag just read, and whether it is there.
func (s *xmlScanner) attr(name string) ([]byte, bool, error) {
	a := s.attrs
	for {
		a = trimSpaceLeft(a)
		if len(a) == 0 {
			return nil, false, nil
		}
		eq := bytes.IndexByte(a, '=')
		if eq <= 0 {
			return nil, false, fmt.Errorf("an attribute without a value")
		}
		key := trimSpaceRight(a[:eq])
		a = trimSpaceLeft(a[eq+1:])
		if len(a) == 0 || a[0] != '"' && a[0] != '\'' {
			return nil, false, fmt.Errorf("an attribute value without quotes")
		}
		q := bytes.IndexByte(a[1:], a[0])
		if q < 0 {
			return nil, false, fmt.Errorf("an attribute value without its closing quote")
		}
		val := a[1 : q+1]
		a = a[q+2:]
		if string(key) == name {
			return val, true, nil
		}
	}
}

// isSpace reports whether c is XML's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimSpaceLeft is b without XML white space before it. bytes.TrimLeft
// with a cutset of four builds a set on every call: a sixth of a large
// sheet's reading went to it and its twin.
func trimSpaceLeft(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// trimSpaceRight is b without XML white space after it.
func trimSpaceRight(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// attrString is attr decoded: "" when absent or not well formed.
func (s *xmlScanner) attrString(name string) string {
	v, ok, err := s.attr(name)
	if !ok || err != nil {
		return ""
	}
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return string(v)
	}
	var b []byte
	b, err = appendXMLText(b, v, false)
	if err != nil {
		return ""
	}
	return string(b)
}

// appendXMLText appends raw text decoded: entities and character
// references (unless cdata), line ends as "\n". Errors: an unknown or cut
// entity, bytes that are not UTF-8, a character XML forbids.
func appendXMLText(dst, raw []byte, cdata bool) ([]byte, error) {
	if err := checkXMLChars(raw); err != nil {
		return dst, err
	}
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "&\r")
		if i < 0 || cdata && raw[i] == '&' {
			if cdata {
				if j := bytes.IndexByte(raw, '\r'); j >= 0 {
					i = j
				} else {
					return append(dst, raw...), nil
				}
			} else {
				return append(dst, raw...), nil
			}
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		if raw[0] == '\r' {
			dst = append(dst, '\n')
			raw = raw[1:]
			if len(raw) > 0 && raw[0] == '\n' {
				raw = raw[1:]
			}
			continue
		}
		semi := bytes.IndexByte(raw, ';')
		if semi < 0 {
			return dst, fmt.Errorf("an entity without its ';'")
		}
		ent := raw[1:semi]
		raw = raw[semi+1:]
		switch string(ent) {
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "amp":
			dst = append(dst, '&')
		case "apos":
			dst = append(dst, '\'')
		case "quot":
			dst = append(dst, '"')
		default:
			r, err := charRef(ent)
			if err != nil {
				return dst, err
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, nil
}

// charRef reads a character reference's "#123" or "#x7B".
func charRef(ent []byte) (rune, error) {
	if len(ent) < 2 || ent[0] != '#' {
		return 0, fmt.Errorf("an unknown entity &%s;", ent)
	}
	base, digits := 10, ent[1:]
	if digits[0] == 'x' {
		base, digits = 16, digits[1:]
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || !xmlChar(rune(n)) {
		return 0, fmt.Errorf("a character reference &%s; to no allowed character", ent)
	}
	return rune(n), nil
}

// checkXMLChars refuses bytes that are not UTF-8 and characters XML does
// not allow, as encoding/xml does.
func checkXMLChars(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			if c != '\t' && c != '\n' && c != '\r' {
				return fmt.Errorf("illegal character code U+%04X", c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("invalid UTF-8")
		}
		if !xmlChar(r) {
			return fmt.Errorf("illegal character code U+%04X", r)
		}
		i += size
	}
	return nil
}

// xmlChar reports whether XML 1.0 allows r.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
