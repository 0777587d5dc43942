// Package exports turns stored files and tables into files people take away.
package exports

import (
	"mime"
	"strings"
	"unicode"
)

// ContentDisposition returns an attachment header value that carries any
// filename safely: an ASCII fallback in filename= and the exact name in
// RFC 6266's filename*= (UTF-8, percent-encoded).
func ContentDisposition(filename string) string {
	fallback := strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII || unicode.IsControl(r) || r == '"' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, filename)
	if fallback == "" {
		fallback = "download"
	}
	v := mime.FormatMediaType("attachment", map[string]string{"filename": fallback})
	if fallback != filename {
		// FormatMediaType encodes non-ASCII values as filename*=utf-8''...
		if ext := mime.FormatMediaType("attachment", map[string]string{"filename": filename}); ext != "" {
			v += "; " + strings.TrimPrefix(ext, "attachment; ")
		}
	}
	return v
}
