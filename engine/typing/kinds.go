package typing

import (
	"fmt"
	"strconv"
	"strings"
)

// CellKind is what a spreadsheet cell holds, as its file says: a number, a
// day number under a date format, a boolean, an error, or text. Spreadsheet
// readers yield it beside the cell's text, so a column's type comes from
// what the cells are and not only from how they read.
type CellKind uint8

// Cell kinds. The text a reader yields with each is the form a person sees:
// shortest exact number (`0.1`, `44105`), ISO date (`2020-10-01`), ISO date
// and time (`2020-10-01T08:30:00`, fractions of a second kept), time of day
// (`08:30:00`), `TRUE`/`FALSE`, an error as Excel writes it (`#DIV/0!`).
const (
	KindEmpty CellKind = iota
	KindText
	KindNumber
	KindDate
	KindDateTime
	KindTime
	KindBool
	KindError
	numKinds
)

// kindNames name each kind in import reports, singular and plural.
var kindNames = [numKinds][2]string{
	KindText:     {"text value", "text values"},
	KindNumber:   {"number", "numbers"},
	KindDate:     {"date", "dates"},
	KindDateTime: {"date-time", "date-times"},
	KindTime:     {"time of day", "times of day"},
	KindBool:     {"boolean", "booleans"},
	KindError:    {"error", "errors"},
}

// reportOrder is the order kinds are listed in a reason.
var reportOrder = []CellKind{KindDate, KindDateTime, KindTime, KindNumber, KindBool, KindError, KindText}

// KindCounts counts the kinds of one column's cells, keeping the first text
// of each kind to show in the report.
type KindCounts struct {
	n     [numKinds]int64
	first [numKinds]string
}

// Add counts one cell of kind with its text.
func (k *KindCounts) Add(kind CellKind, text string) {
	if kind == KindEmpty || kind >= numKinds || strings.TrimSpace(text) == "" {
		return
	}
	if k.n[kind] == 0 {
		k.first[kind] = text
	}
	k.n[kind]++
}

// only reports whether every counted cell has one of the given kinds, and
// at least one cell was counted.
func (k *KindCounts) only(kinds ...CellKind) bool {
	var in, total int64
	for kind := KindText; kind < numKinds; kind++ {
		total += k.n[kind]
	}
	for _, kind := range kinds {
		in += k.n[kind]
	}
	return total > 0 && in == total
}

// DecideCells picks the type of a spreadsheet column from its kinds and its
// texts. Cells of one kind keep the rules ingest has for text (numbers by
// their digits, text that reads as numbers or dates as those); dates,
// date-times and booleans are what their cells say; any other mix is text
// whose every cell reads as a person sees it, and the reason names the
// kinds that were mixed.
func DecideCells(k *KindCounts, st *Stats, key string, h Hint) Decision {
	if h.Type != "" {
		return Decide(st, key, h)
	}
	switch {
	case k.only(KindDate):
		return Decision{Type: TypeDate, Reason: fmt.Sprintf("date: all %d cells are dates", k.n[KindDate])}
	case k.only(KindDate, KindDateTime):
		return Decision{Type: TypeTimestamp, Reason: fmt.Sprintf("timestamp: all %d cells are dates or date-times", k.n[KindDate]+k.n[KindDateTime])}
	case k.only(KindTime):
		return Decision{Type: TypeTime, Reason: fmt.Sprintf("time: all %d cells are times of day", k.n[KindTime])}
	case k.only(KindBool):
		return Decision{Type: TypeBoolean, Reason: fmt.Sprintf("boolean: all %d cells are TRUE or FALSE", k.n[KindBool])}
	case k.only(KindNumber), k.only(KindText):
		return Decide(st, key, Hint{})
	case k.only(KindNumber, KindText):
		// Numbers stored as text beside numbers are still numbers when
		// every text reads as one; a few texts such as ".." leave the
		// column to be read again (engine/refine.go).
		// What made the column text is its text cells, named in the
		// reason, not its numbers' digits; only leading zeros make
		// codes of numbers beside text.
		d := Decide(st, key, Hint{})
		if d.Type != TypeText || st.Lead > 0 {
			return d
		}
		return Decision{Type: TypeText, Identifier: HasIdentifierWord(key), Reason: "text: " + k.mix(), Numberish: d.Numberish}
	}
	return Decision{Type: TypeText, Reason: "text: " + k.mix()}
}

// mix describes the kinds of a column: `24 dates and 1 text value ("Total")`.
func (k *KindCounts) mix() string {
	var parts []string
	for _, kind := range reportOrder {
		n := k.n[kind]
		if n == 0 {
			continue
		}
		p := plural(n, kindNames[kind][0], kindNames[kind][1])
		if kind == KindText || kind == KindError {
			p += " (" + strconv.Quote(shorten(k.first[kind])) + ")"
		}
		parts = append(parts, p)
	}
	switch len(parts) {
	case 0:
		return "the column has no values"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// shorten cuts an example value for a report to a readable length.
func shorten(s string) string {
	const max = 40
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

// Hint is what a file format knows about a column.
type Hint struct {
	// NoNumbers keeps a column from becoming numeric or boolean, for formats
	// whose cells say they are text (JSON strings).
	NoNumbers bool
	// DateSerial marks a column whose numeric cells have a date format
	// (spreadsheets store dates as day numbers).
	DateSerial bool
	// Date1904 says day numbers count from 1904-01-01, not 1899-12-30.
	Date1904 bool
	// Type, when set, is the type the column must have (one of the Type
	// constants); a value that does not read as it fails the load.
	Type string
}
