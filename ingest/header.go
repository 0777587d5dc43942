package ingest

import (
	"fmt"
	"slices"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// People write titles, sources and notes above a sheet's table, and notes
// and footnotes below it. The header is found among the first probeRows
// rows with a value: the first row as wide as the rows under it, with a
// label over a column of numbers or dates, under rows narrower than it
// (a title, a line of notes). Where no row is such a header, the first
// row is, as before. Below, the last rows each holding a single text in a
// table of several columns are notes; up to tailRows of them are kept out.
const (
	probeRows = 30
	tailRows  = 20
	// bodyRows is how many rows under a candidate header say how wide
	// the table is and what its columns hold.
	bodyRows = 10
)

// probeRow is one row read to find the header.
type probeRow struct {
	row   int
	texts []string
	kinds []typing.CellKind
}

func (p probeRow) width() int {
	n := 0
	for _, t := range p.texts {
		if strings.TrimSpace(t) != "" {
			n++
		}
	}
	return n
}

// typed reports whether cell i holds a number, date or time.
func (p probeRow) typed(i int) bool {
	if i >= len(p.kinds) || i >= len(p.texts) || strings.TrimSpace(p.texts[i]) == "" {
		return false
	}
	switch p.kinds[i] {
	case typing.KindNumber, typing.KindDate, typing.KindDateTime, typing.KindTime:
		return true
	}
	return false
}

// label reports whether cell i holds text.
func (p probeRow) label(i int) bool {
	return i < len(p.texts) && strings.TrimSpace(p.texts[i]) != "" && (i >= len(p.kinds) || p.kinds[i] == typing.KindText)
}

// findHeader returns the index among rows of the header row: 0 unless a
// later row is a header by the evidence above it and below it.
func findHeader(rows []probeRow) int {
	for i := 1; i < len(rows)-1 && i < probeRows-1; i++ {
		if headerAt(rows, i) {
			return i
		}
	}
	return 0
}

// uncertainNote says, when the first row is kept as the header but is
// much narrower than the rows under it (a title, perhaps, over a table
// whose header the rules could not tell), that the header may be
// elsewhere and how to say where; "" when the first row looks a header.
func uncertainNote(rows []probeRow) string {
	if len(rows) < 3 {
		return ""
	}
	w := medianWidth(rows[1:min(len(rows), 1+bodyRows)])
	if w < 2 || rows[0].width()*2 > w {
		return ""
	}
	return fmt.Sprintf("the header was not certain: row %d, taken as the header, holds %d of the %d values of the rows under it; "+
		"if the header is another row, read the file again naming it (header_row)", rows[0].row, rows[0].width(), w)
}

// medianWidth is the median of rows' widths.
func medianWidth(rows []probeRow) int {
	widths := make([]int, len(rows))
	for j, r := range rows {
		widths[j] = r.width()
	}
	slices.Sort(widths)
	return widths[len(widths)/2]
}

// headerAt reports whether rows[i] is a header: about as wide as the
// rows under it and wider than every row above it, more labels than
// numbers, and a label over a column whose cells below are mostly
// numbers or dates, the first row below among them.
func headerAt(rows []probeRow, i int) bool {
	h := rows[i]
	body := rows[i+1 : min(len(rows), i+1+bodyRows)]
	w := medianWidth(body)
	if w < 2 || h.width() < max(2, w*4/5) {
		return false
	}
	for _, r := range rows[:i] {
		if r.width() >= h.width() {
			return false
		}
	}
	years := yearLabels(h)
	labels, typed := len(years), 0
	for c := range h.texts {
		if h.label(c) {
			labels++
		} else if h.typed(c) && !years[c] {
			typed++
		}
	}
	if labels <= typed {
		return false
	}
	// Years in a row, labelling columns of numbers ("1960", "1961", ...),
	// are a header as statistics write them.
	if len(years) >= 3 {
		for c := range years {
			if body[0].typed(c) {
				return true
			}
		}
	}
	for c := range h.texts {
		if !h.label(c) || !body[0].typed(c) {
			continue
		}
		n := 0
		for _, r := range body {
			if r.typed(c) {
				n++
			}
		}
		if n*2 > len(body) {
			return true
		}
	}
	return false
}

// yearLabels are the cells of a row that hold years, 1800 to 2199,
// rising from left to right: a header's labels of yearly columns. It is
// empty unless there are at least three.
func yearLabels(r probeRow) map[int]bool {
	out := map[int]bool{}
	last := 0
	for c, t := range r.texts {
		t = strings.TrimSpace(t)
		if len(t) != 4 || !isYear(t) {
			continue
		}
		y := int(t[0]-'0')*1000 + int(t[1]-'0')*100 + int(t[2]-'0')*10 + int(t[3]-'0')
		if y <= last {
			return map[int]bool{}
		}
		out[c], last = true, y
	}
	if len(out) < 3 {
		return map[int]bool{}
	}
	return out
}

func isYear(t string) bool {
	for i := 0; i < 4; i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return t[0] == '1' && t[1] >= '8' || t[0] == '2' && t[1] <= '1'
}

// noteRow reports whether a row below a table of width columns, whose
// data rows so far were each at least narrowest wide, is a note: no
// number or date, narrower than every row of data, and either text in at
// most a third of the columns of a table of five or more, or a single
// text that reads as a sentence
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
	if width >= 5 && w <= width/3 {
		return true
	}
	if w != 1 {
		return false
	}
	for c := range r.texts {
		t := strings.TrimSpace(r.texts[c])
		if t == "" {
			continue
		}
		l := strings.ToLower(t)
		for _, m := range []string{"source", "note", "*", "†", "‡", "©", "(", "footnote"} {
			if strings.HasPrefix(l, m) {
				return true
			}
		}
		return len(strings.Fields(t)) >= 3
	}
	return false
}

// footer holds back the rows after a table's data that may be notes,
// handing each on once a row of data follows it.
type footer struct {
	width, narrowest int
	held             []probeRow
}

func newFooter(width int) *footer { return &footer{width: width, narrowest: width} }

// add takes row r, whose slices may be reused once it returns: a
// possible note is held, anything else first hands on what was held,
// then itself. A row without kinds (of a CSV file) has them read only
// when it is narrower than every row of data, as a note must be.
func (f *footer) add(r probeRow, pass func(probeRow) error) error {
	maybe := false
	if f.width > 0 {
		if w := r.width(); w < f.narrowest {
			if r.kinds == nil {
				r.kinds = textKinds(r.texts)
			}
			maybe = w == 0 || noteRow(r, f.width, f.narrowest)
		}
	}
	if maybe {
		// An empty record is held too: before notes it belongs to them,
		// before data it is handed on with the rest. At most tailRows
		// are held: past them the first is data after all.
		f.hold(r)
		if len(f.held) > tailRows {
			first := f.held[0]
			f.held = f.held[1:]
			return f.pass(first, pass)
		}
		return nil
	}
	for _, h := range f.held {
		if err := f.pass(h, pass); err != nil {
			return err
		}
	}
	f.held = f.held[:0]
	return f.pass(r, pass)
}

func (f *footer) hold(r probeRow) {
	r.texts, r.kinds = slices.Clone(r.texts), slices.Clone(r.kinds)
	f.held = append(f.held, r)
}

func (f *footer) pass(r probeRow, pass func(probeRow) error) error {
	if w := r.width(); w > 0 {
		f.narrowest = min(f.narrowest, w)
	}
	return pass(r)
}

// end takes the end of the file: the rows still held are notes below the
// data, kept out and listed but for empty ones; held empty rows with no
// note among them are data, as ever.
func (f *footer) end(pass func(probeRow) error) ([]catalog.SkippedRow, error) {
	notes := f.notes()
	if len(notes) > 0 {
		return notes, nil
	}
	for _, h := range f.held {
		if err := f.pass(h, pass); err != nil {
			return nil, err
		}
	}
	f.held = nil
	return nil, nil
}

// notes are the held rows with a value, as the report lists them.
func (f *footer) notes() []catalog.SkippedRow {
	var out []catalog.SkippedRow
	for _, r := range f.held {
		if !emptyRow(r.texts) {
			out = append(out, skippedRow(r, "below"))
		}
	}
	return out
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

// skippedNote says in words what was kept out, for readers of the notes.
func skippedNote(above, below []catalog.SkippedRow, header int) string {
	var parts []string
	if len(above) > 0 {
		parts = append(parts, fmt.Sprintf("the header is row %d; %s above it kept out of the table", header, rowsWord(len(above))))
	}
	if len(below) > 0 {
		parts = append(parts, fmt.Sprintf("%s of notes below the table kept out", rowsWord(len(below))))
	}
	return strings.Join(parts, "; ") + " (skipped_rows lists each)"
}

func rowsWord(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
