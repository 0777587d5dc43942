package datadesk

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// UnsafeNameRune reports whether r must not appear in a name people read:
// a file, sheet, column or aggregate name. Control characters (NUL,
// newline, DEL, C1), bytes that are not UTF-8, and format characters
// (Unicode's Cf): bidirectional controls (U+202A..U+202E, U+2066..U+2069,
// LRM, RLM, ALM), which make "gnp.exe" read as "exe.png", zero-width
// spaces, soft hyphens and the tag characters that can spell text no one
// sees. Zero-width joiners and non-joiners stay: words and emoji need them.
func UnsafeNameRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == utf8.RuneError:
		return true
	case r == 0x200c, r == 0x200d:
		// Zero-width (non-)joiners shape Persian, Indic and emoji text.
		return false
	case unicode.Is(unicode.Cf, r):
		// Format characters change how text reads without being seen:
		// bidi overrides and isolates, zero-width spaces, the tag
		// characters that can spell hidden text.
		return true
	}
	return false
}

// CleanName returns name without the runes UnsafeNameRune refuses.
func CleanName(name string) string {
	return strings.Map(func(r rune) rune {
		if UnsafeNameRune(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
}

// FirstUnsafeRune returns the first rune of s that UnsafeNameRune refuses,
// and whether there is one.
func FirstUnsafeRune(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		if UnsafeNameRune(r) {
			return r, true
		}
	}
	return 0, false
}

// MaxFilenameLen bounds a stored file's name, in bytes.
const MaxFilenameLen = 240

// CleanFilename keeps the last path element of an uploaded name, without
// control characters. Errors: invalid.
func CleanFilename(name string) (string, error) {
	name = strings.ReplaceAll(name, "\\", "/")
	name = filepath.Base("/" + name)
	name = strings.TrimSpace(CleanName(name))
	if name == "" || name == "/" || name == "." || name == ".." {
		return "", Errorf(Invalid, "the upload has no file name").WithField("file")
	}
	if len(name) > MaxFilenameLen {
		return "", Errorf(Invalid, "the file name is longer than %d bytes", MaxFilenameLen).WithField("file")
	}
	return name, nil
}
