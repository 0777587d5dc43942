package typing

import (
	"strconv"
	"strings"
	"unicode"

	"datadesk"
)

// maxKeyRunes bounds the length of a column key.
const maxKeyRunes = 64

// ReservedKeys are the names the engine itself uses beside a table's
// columns: DuckDB's rowid, the hidden row number that file order and paging
// rest on (a column of that name would hide it), and the row number a
// query carries. No column key may be one of them.
var ReservedKeys = []string{"rowid", "__row"}

// ColumnKeys turns header labels into column keys: lower case, letters and
// digits joined by underscores, control characters dropped, a blank label
// named column_N by its position, and duplicates (compared
// case-insensitively, as DuckDB compares identifiers) and the engine's own
// names made unique with a numeric suffix.
func ColumnKeys(labels []string) []string {
	keys := make([]string, len(labels))
	for i, l := range labels {
		keys[i] = Key(l)
	}
	return UniqueKeys(keys)
}

// UniqueKeys makes keys safe to be column names: control characters (NUL
// among them, which DuckDB cannot parse) dropped, a blank key named
// column_N by its position, and a key equal to an engine name or to an
// earlier key, case-insensitively, given a numeric suffix. Keys are
// otherwise kept as they are.
func UniqueKeys(in []string) []string {
	keys := make([]string, len(in))
	seen := map[string]bool{}
	for _, n := range ReservedKeys {
		seen[n] = true
	}
	for i, k := range in {
		k = strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == unicode.ReplacementChar {
				return -1
			}
			return r
		}, k))
		if k == "" {
			k = "column_" + strconv.Itoa(i+1)
		}
		base := k
		for n := 2; seen[strings.ToLower(k)]; n++ {
			k = base + "_" + strconv.Itoa(n)
		}
		seen[strings.ToLower(k)] = true
		keys[i] = k
	}
	return keys
}

// Key turns one header label into a column key: lower case letters and
// digits, every other run of characters one underscore, at most
// maxKeyRunes long.
func Key(label string) string {
	var b strings.Builder
	pendingSep := false
	n := 0
	for _, r := range label {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
				n++
			}
			pendingSep = false
			b.WriteRune(unicode.ToLower(r))
			n++
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			// dropped
		default:
			pendingSep = true
		}
		if n >= maxKeyRunes {
			break
		}
	}
	return b.String()
}

// CleanLabel drops control and invisible format characters (bidi
// overrides, zero-width spaces, tags; datadesk.UnsafeNameRune) from a
// header label and trims it; the label is shown as the file has it
// otherwise.
func CleanLabel(label string) string {
	return strings.TrimSpace(datadesk.CleanName(label))
}
