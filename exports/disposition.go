// Package exports turns stored files and tables into files people take away.
package exports

import (
	"fmt"
	"strings"
	"unicode"

	"datadesk"
)

// ContentDisposition returns an attachment header value with exactly one
// filename parameter, a quoted ASCII fallback, and, when the name is not
// plain ASCII, exactly one RFC 6266 filename* with the exact name (UTF-8,
// percent-encoded). Control and bidirectional-override characters are
// dropped from both.
func ContentDisposition(filename string) string {
	filename = datadesk.CleanName(filename)
	fallback := strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII || r < ' ' || r == 0x7f || r == '"' || r == '\\' || r == '/' || r == '%' {
			return '_'
		}
		return r
	}, filename)
	if strings.TrimSpace(fallback) == "" {
		fallback = "download"
	}
	v := `attachment; filename="` + fallback + `"`
	if fallback != filename && filename != "" {
		v += "; filename*=utf-8''" + percentEncode(filename)
	}
	return v
}

// percentEncode encodes s as RFC 8187's value-chars: attr-chars as they
// are, every other byte as %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// MediaTypes are the media types of the export formats, by format.
var MediaTypes = map[string]string{
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"csv":  "text/csv; charset=utf-8",
	"json": "application/json",
}
