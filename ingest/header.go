package ingest

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// headerRows finds the rows of the header that ends at rows[h], a label
// row: rows[h] itself; the row above it too when rows[h] holds the units
// of the labels above; and, up to maxHeaderRows rows in all, group rows
// above those (labels over several columns each, as agencies' workbooks
// write them in merged cells). It returns the index of the header's top
// row and of its units row, or -1.
func headerRows(rows []probeRow, from, h int, p profile) (top, units int) {
	top, units = h, -1
	if h-1 >= from && rows[h].gap == 0 && unitsRow(rows[h], rows[h-1], p) {
		top, units = h-1, h
	}
	for top-1 >= from && h-top+1 < maxHeaderRows && rows[top].gap == 0 &&
		labelRow(rows[top-1], p) && groupRow(rows[top-1], rows[top], p) {
		top--
	}
	return top, units
}

// unitsRow reports whether r, under the label row above, holds units:
// each of its cells one, and no wider than the labels.
func unitsRow(r, above probeRow, p profile) bool {
	if !labelRow(above, p) || r.width() == 0 || r.width() > above.width() {
		return false
	}
	for c, t := range r.texts {
		if t = strings.TrimSpace(t); t != "" && (!unitLike(t) || strings.TrimSpace(cellText(above, c)) == "") {
			return false
		}
	}
	return true
}

// unitWords are units as agencies' headers write them, compared in lower
// case.
var unitWords = map[string]bool{
	"%": true, "percent": true, "per cent": true, "pct": true, "pp": true, "index": true, "ratio": true, "rate": true,
	"usd": true, "gbp": true, "eur": true, "jpy": true, "chf": true, "cad": true, "aud": true, "cny": true,
	"bn": true, "mn": true, "m": true, "k": true, "000s": true, "'000": true, "thousands": true, "millions": true, "billions": true,
	"kg": true, "t": true, "kt": true, "mt": true, "tonnes": true, "mwh": true, "gwh": true, "twh": true, "kwh": true,
	"units": true, "number": true, "no.": true, "years": true, "days": true, "hours": true,
	"dollars": true, "pounds": true, "euros": true, "yen": true, "thousand": true, "million": true, "billion": true,
	"of": true, "per": true, "barrel": true, "barrels": true, "tonne": true, "ton": true, "tons": true, "gallons": true,
	"litres": true, "liters": true, "btu": true, "mmbtu": true, "points": true, "persons": true, "people": true, "share": true,
}

// unitLike reports whether a header cell reads as a unit: a currency or
// percent sign, a word in brackets, or a unit word.
func unitLike(t string) bool {
	if utf8.RuneCountInString(t) > 24 {
		return false
	}
	if strings.ContainsAny(t, "£$€¥%‰°") {
		return true
	}
	if len(t) >= 2 && (t[0] == '(' && t[len(t)-1] == ')' || t[0] == '[' && t[len(t)-1] == ']') {
		return true
	}
	if unitWords[strings.ToLower(t)] {
		return true
	}
	// Words of units ("USD bn", "millions of dollars").
	words := strings.Fields(strings.ToLower(t))
	for _, w := range words {
		if !unitWords[w] {
			return false
		}
	}
	return len(words) > 1
}

// groupRow reports whether u, above header row below, labels groups of
// the columns under it: two labels or more, none a metadata line's,
// each over a column of the block, and none over the first column where
// the row below labels it (that column's label is the row below's).
func groupRow(u, below probeRow, p profile) bool {
	if metaRow(u) || u.width() < 2 {
		return false
	}
	for c, t := range u.texts {
		if strings.TrimSpace(t) != "" && p.at(c) == classEmpty && strings.TrimSpace(cellText(below, c)) == "" {
			return false
		}
	}
	first := p.first()
	if strings.TrimSpace(cellText(below, first)) != "" {
		return strings.TrimSpace(cellText(u, first)) == ""
	}
	return u.width() <= below.width()
}

func cellText(r probeRow, c int) string {
	if c < len(r.texts) {
		return r.texts[c]
	}
	return ""
}

// header is what a table's header rows make: one label per column, keys
// when the header has several rows (the groups' labels and the column's,
// without the unit), and each column's unit.
type header struct {
	labels, keys, units []string
	rows                []int
}

// headerOf makes the labels of a header of rows hdr, units the index of
// its units row or -1: a group row's label stands over the columns to its
// right until the next one ("All Houses" over Index, Price and Annual
// Change), and a column's label is its groups' and its own, joined by
// " · ", with its unit in brackets: "All Houses · Price (£)".
func headerOf(hdr []probeRow, units int) header {
	var h header
	width := 0
	for _, r := range hdr {
		width = max(width, len(r.texts))
		h.rows = append(h.rows, r.row)
	}
	if len(hdr) == 1 {
		h.labels = slices.Clone(hdr[0].texts)
		return h
	}
	var labelRows [][]string
	for i, r := range hdr {
		if i == units {
			continue
		}
		row := make([]string, width)
		copy(row, r.texts)
		for c := range row {
			row[c] = strings.TrimSpace(row[c])
		}
		labelRows = append(labelRows, row)
	}
	// Groups stand over the columns to their right until the next label.
	for _, row := range labelRows[:len(labelRows)-1] {
		for c := 1; c < width; c++ {
			if row[c] == "" {
				row[c] = row[c-1]
			}
		}
	}
	h.labels, h.keys, h.units = make([]string, width), make([]string, width), make([]string, width)
	for c := range width {
		var parts []string
		for _, row := range labelRows {
			if row[c] != "" && (len(parts) == 0 || parts[len(parts)-1] != row[c]) {
				parts = append(parts, row[c])
			}
		}
		if units >= 0 {
			h.units[c] = strings.TrimSpace(cellText(hdr[units], c))
		}
		h.labels[c] = strings.Join(parts, " · ")
		h.keys[c] = typing.Key(strings.Join(parts, " "))
		if h.units[c] != "" {
			h.labels[c] = strings.TrimSpace(h.labels[c] + " (" + strings.Trim(h.units[c], "()[]") + ")")
		}
	}
	return h
}

// uncertainNote says, when the first row is kept as the header of a
// table of text but is much narrower than the rows under it (a title,
// perhaps, over a table whose header nothing typed tells), that the
// header may be elsewhere and how to say where; "" when the first row
// looks a header.
func uncertainNote(rows []probeRow) string {
	if len(rows) < 3 {
		return ""
	}
	body := rows[1:min(len(rows), 11)]
	widths := make([]int, len(body))
	for j, r := range body {
		widths[j] = r.width()
	}
	slices.Sort(widths)
	w := widths[len(widths)/2]
	if w < 2 || rows[0].width()*2 > w {
		return ""
	}
	return fmt.Sprintf("the header was not certain: row %d, taken as the header, holds %d of the %d values of the rows under it; "+
		"if the header is another row, read the file again naming it (header_rows)", rows[0].row, rows[0].width(), w)
}

// noteRow reports whether a row below a table of width columns, whose
// data rows so far were each at least narrowest wide, is a note: no
// number or date, narrower than every row of data, and either text in at
// most a third of the columns of a table of five or more, a metadata
// line ("Release Date: ..."), or a single text that reads as a sentence
// or a footnote ("Source: ...", "* ..."). In a table whose data has rows
// as narrow, no row is a note.
func noteRow(r probeRow, width, narrowest int) bool {
	w := r.width()
	if width < 2 || w == 0 || w >= narrowest {
		return false
	}
	for c := range r.texts {
		if r.typed(c) || strings.TrimSpace(r.texts[c]) != "" && !r.label(c) {
			return false
		}
	}
	// Text in a third of a wide table's columns, under rows of data all
	// wider: a table of four columns or fewer may well have rows of one
	// word ("hidden", "visible").
	if width >= 5 && w <= width/3 || metaRow(r) {
		return true
	}
	if w != 1 {
		return false
	}
	t := strings.TrimSpace(r.texts[r.only()])
	l := strings.ToLower(t)
	for _, m := range []string{"source", "note", "*", "†", "‡", "©", "(", "footnote"} {
		if strings.HasPrefix(l, m) {
			return true
		}
	}
	return len(strings.Fields(t)) >= 3
}

// skippedRow is a row kept out of a table, for the import report.
func skippedRow(r probeRow, where string) catalog.SkippedRow {
	var parts []string
	for _, t := range r.texts {
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	text := strings.Join(parts, " | ")
	if rs := []rune(text); len(rs) > 200 {
		text = string(rs[:200]) + "…"
	}
	return catalog.SkippedRow{Row: int64(r.row), Where: where, Text: text}
}

func rowsWord(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
