package ducksql

import "strings"

// Ident quotes a SQL identifier, doubling any quote inside it.
func Ident(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
