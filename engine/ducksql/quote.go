package ducksql

import (
	"strconv"
	"strings"
)

// Ident quotes a SQL identifier, doubling any quote inside it.
func Ident(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// limitOffset is a statement's LIMIT and OFFSET, the plan's numbers
// written as numbers, not bound: a grouping of 1,000,000 rows took 0.3 ms
// (6%) more with them bound than with numbers, the same statement
// otherwise (medians of 41). They are integers of a checked plan, never a
// caller's text.
func limitOffset[N int | int64](limit, offset N) string {
	return " LIMIT " + strconv.FormatInt(int64(limit), 10) + " OFFSET " + strconv.FormatInt(int64(offset), 10)
}
