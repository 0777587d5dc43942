package ingest

import (
	"strconv"
	"strings"

	"datadesk"
)

// ParseOptions reads a person's corrections to how a file is read, as a form
// or a query gives them: the header's row, and the sheet it applies to. Errors: invalid.
func ParseOptions(headerRow, sheet string) (Options, error) {
	var o Options
	if headerRow != "" {
		n, err := strconv.Atoi(strings.TrimSpace(headerRow))
		if err != nil {
			return o, datadesk.Errorf(datadesk.Invalid, "header_row must be a row number from 1 to %d", MaxHeaderRow).WithField("header_row")
		}
		o.HeaderRow = n
	}
	o.Sheet = sheet
	return o, o.Check()
}
