package ingest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"datadesk"
)

// Options are a person's corrections to how a file is read: which rows
// hold the header, which sheet that applies to, and which rows to keep
// out of the table.
type Options struct {
	// HeaderRows, from 1, are the rows (of a sheet, or records of a CSV
	// file) that make the header, top to bottom: one, or a group row, a
	// label row and a units row. The rows above the first are kept out,
	// and the table runs from under the last to the end of the sheet.
	// None: the tables are found.
	HeaderRows []int
	// Sheet, when set, is the one sheet the options apply to; the others
	// are read as ever. It must be a sheet of the workbook.
	Sheet string
	// SkipRows are rows kept out of the tables, each listed in the
	// import report.
	SkipRows []int
}

// Limits of Options.
const (
	// MaxHeaderRow is the lowest row a header may be named in.
	MaxHeaderRow = 1000
	// MaxNamedHeaderRows bounds the rows one named header is made of.
	MaxNamedHeaderRows = 5
	// MaxSkipRows bounds the rows one reading keeps out by name.
	MaxSkipRows = 1000
	// maxSkipRow is the last row a spreadsheet can have.
	maxSkipRow = 1 << 20
)

// Check refuses options out of range. Errors: invalid.
func (o Options) Check() error {
	if len(o.HeaderRows) > MaxNamedHeaderRows {
		return datadesk.Errorf(datadesk.Invalid, "header_rows names at most %d rows", MaxNamedHeaderRows).WithField("header_rows")
	}
	for i, r := range o.HeaderRows {
		if r < 1 || r > MaxHeaderRow {
			if len(o.HeaderRows) == 1 {
				return datadesk.Errorf(datadesk.Invalid, "header_row must be a row number from 1 to %d", MaxHeaderRow).WithField("header_row")
			}
			return datadesk.Errorf(datadesk.Invalid, "header_rows must be row numbers from 1 to %d", MaxHeaderRow).WithField("header_rows")
		}
		if i > 0 && r <= o.HeaderRows[i-1] {
			return datadesk.Errorf(datadesk.Invalid, "header_rows must rise, top to bottom: %d follows %d", r, o.HeaderRows[i-1]).WithField("header_rows")
		}
	}
	if n := len(o.HeaderRows); n > 1 && o.HeaderRows[n-1]-o.HeaderRows[0] >= 2*MaxNamedHeaderRows {
		return datadesk.Errorf(datadesk.Invalid, "header_rows must be rows close together (within %d rows)", 2*MaxNamedHeaderRows).WithField("header_rows")
	}
	if len(o.SkipRows) > MaxSkipRows {
		return datadesk.Errorf(datadesk.Invalid, "skip_rows names at most %d rows", MaxSkipRows).WithField("skip_rows")
	}
	for _, r := range o.SkipRows {
		if r < 1 || r > maxSkipRow {
			return datadesk.Errorf(datadesk.Invalid, "skip_rows must be row numbers from 1 to %d", maxSkipRow).WithField("skip_rows")
		}
		if slices.Contains(o.HeaderRows, r) {
			return datadesk.Errorf(datadesk.Invalid, "row %d is named in both header_rows and skip_rows", r).WithField("skip_rows")
		}
	}
	if o.Sheet != "" && len(o.HeaderRows) == 0 && len(o.SkipRows) == 0 {
		return datadesk.Errorf(datadesk.Invalid, "sheet names the sheet header_rows or skip_rows apply to; give one of them too").WithField("sheet")
	}
	return nil
}

// Zero reports whether the options ask for nothing.
func (o Options) Zero() bool {
	return len(o.HeaderRows) == 0 && len(o.SkipRows) == 0 && o.Sheet == ""
}

// String says what the options ask, as a descriptor or a note says it:
// "header rows 4-6 of sheet Prices, rows 300-301 kept out".
func (o Options) String() string {
	var parts []string
	if len(o.HeaderRows) > 0 {
		word := "header row "
		if len(o.HeaderRows) > 1 {
			word = "header rows "
		}
		parts = append(parts, word+rowList(o.HeaderRows))
	}
	if o.Sheet != "" {
		parts = append(parts, fmt.Sprintf("of sheet %q", o.Sheet))
	}
	if len(o.SkipRows) > 0 {
		parts = append(parts, "rows "+rowList(o.SkipRows)+" kept out")
	}
	return strings.Join(parts, " ")
}

// rowList writes rising row numbers with runs as ranges: "4-6, 9".
func rowList(rows []int) string {
	rows = slices.Sorted(slices.Values(rows))
	var parts []string
	for i := 0; i < len(rows); {
		j := i
		for j+1 < len(rows) && rows[j+1] == rows[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", rows[i], rows[j]))
		} else {
			parts = append(parts, strconv.Itoa(rows[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// ParseOptions reads a person's corrections as a form or a query gives
// them, by name: header_row (one row) or header_rows, sheet, and
// skip_rows, the lists written as "4-6" or "4,5,6". Errors: invalid.
func ParseOptions(value func(name string) string) (Options, error) {
	var o Options
	var err error
	one, many := strings.TrimSpace(value("header_row")), strings.TrimSpace(value("header_rows"))
	switch {
	case one != "" && many != "":
		return o, datadesk.Errorf(datadesk.Invalid, "give header_row or header_rows, not both").WithField("header_rows")
	case one != "":
		n, perr := strconv.Atoi(one)
		if perr != nil {
			return o, datadesk.Errorf(datadesk.Invalid, "header_row must be a row number from 1 to %d", MaxHeaderRow).WithField("header_row")
		}
		o.HeaderRows = []int{n}
	case many != "":
		if o.HeaderRows, err = parseRows(many, "header_rows", MaxNamedHeaderRows); err != nil {
			return o, err
		}
	}
	if s := strings.TrimSpace(value("skip_rows")); s != "" {
		if o.SkipRows, err = parseRows(s, "skip_rows", MaxSkipRows); err != nil {
			return o, err
		}
	}
	o.Sheet = strings.TrimSpace(value("sheet"))
	return o, o.Check()
}

// parseRows reads "4-6, 9" into rising row numbers, at most limit.
func parseRows(s, field string, limit int) ([]int, error) {
	bad := func() error {
		return datadesk.Errorf(datadesk.Invalid, "%s must be row numbers and ranges, such as \"4-6\" or \"1,2,7\"", field).WithField(field)
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, bad()
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, bad()
			}
		}
		if b-a >= limit || len(out)+b-a+1 > limit {
			return nil, datadesk.Errorf(datadesk.Invalid, "%s names at most %d rows", field, limit).WithField(field)
		}
		for r := a; r <= b; r++ {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
