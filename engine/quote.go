package engine

import "strings"

// quoteIdent quotes a SQL identifier, doubling any quote inside it.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
