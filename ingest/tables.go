package ingest

import (
	"slices"
	"strings"
	"unicode/utf8"

	"datadesk/engine/typing"
)

// A table is found where its typed data is: a block of rows whose columns
// keep their kinds (dates, numbers, text), its header the text row or
// rows directly above it. What else a sheet or CSV file holds (titles,
// navigation links, a download's metadata lines above; notes and
// footnotes below; section labels inside) is kept out of the table and
// listed, never a row that looks like the block's rows. A sheet with two
// blocks, each under a header of its own, gives two tables. The rules
// read the first windowRows rows with a value (the whole of most
// agencies' sheets); past them, rows are sorted as they stream
// (blockReader). The shared intuition of published table finders
// (Pytheas, ExtracTable): a real table keeps each column coherent, and
// what surrounds it does not.
const (
	// windowRows and windowCells bound the rows a sheet's layout is
	// found in.
	windowRows  = 10_000
	windowCells = 400_000
	// windowBytes bounds the text a window holds: a sheet of long texts
	// is found in its first rows.
	windowBytes = 4 << 20
	// profileRows is how many rows from a block's first say what each
	// column holds.
	profileRows = 12
	// startRun is how many rows after a block's first must agree with it.
	startRun = 2
	// maxHeaderRows bounds the rows one header is made of.
	maxHeaderRows = 3
	// maxTitles is how many single-cell rows (titles) may stand between
	// a blank row and a header that starts a second table.
	maxTitles = 2
	// lookAhead bounds how far below a blank row a second table's first
	// row of data is looked for.
	lookAhead = 8
)

// probeRow is one row read to find a sheet's or file's tables.
type probeRow struct {
	row int // the row's number in the sheet, or the record's in the file, from 1
	gap int // empty rows or lines directly above it
	// texts and kinds are the cells; kinds may be nil (a CSV record),
	// then read from the texts.
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

// kind is cell i's kind: as the file says, or, for a CSV record, as its
// text reads (textKind).
func (p probeRow) kind(i int) typing.CellKind {
	if i >= len(p.texts) || strings.TrimSpace(p.texts[i]) == "" {
		return typing.KindEmpty
	}
	if p.kinds == nil {
		return textKind(p.texts[i])
	}
	if i >= len(p.kinds) || p.kinds[i] == typing.KindEmpty {
		return typing.KindText
	}
	return p.kinds[i]
}

// typed reports whether cell i holds a number, date or time.
func (p probeRow) typed(i int) bool {
	switch p.kind(i) {
	case typing.KindNumber, typing.KindDate, typing.KindDateTime, typing.KindTime:
		return true
	}
	return false
}

// label reports whether cell i holds text.
func (p probeRow) label(i int) bool { return p.kind(i) == typing.KindText }

// only is the column of the one cell with a value, or -1.
func (p probeRow) only() int {
	at := -1
	for i, t := range p.texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		if at >= 0 {
			return -1
		}
		at = i
	}
	return at
}

// class is what the finder sees of a cell.
type class uint8

const (
	classEmpty class = iota
	classText
	classNumber
	classDate // a date, date-time or time of day
	classAny  // a boolean or an error: at home in a column of any kind
)

func (c class) typed() bool { return c >= classNumber }

// fits reports whether a cell of class c belongs in a typed column of
// class col.
func (c class) fits(col class) bool { return c == col || c == classAny || col == classAny }

func (p probeRow) class(i int) class {
	switch p.kind(i) {
	case typing.KindEmpty:
		return classEmpty
	case typing.KindNumber:
		return classNumber
	case typing.KindDate, typing.KindDateTime, typing.KindTime:
		return classDate
	case typing.KindBool, typing.KindError:
		return classAny
	}
	return classText
}

// profile is what each column of a block holds: a typed class where most
// of its cells are numbers or dates (or booleans and errors), else text
// (or empty, a column with no value yet).
type profile []class

// profileOf is the profile of rows, column by column by majority: typed
// when typed cells are at least as many as text ones.
func profileOf(rows []probeRow) profile {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r.texts))
	}
	p := make(profile, cols)
	for c := range p {
		var n [classAny + 1]int
		for _, r := range rows {
			n[r.class(c)]++
		}
		typed := n[classNumber] + n[classDate] + n[classAny]
		switch {
		case typed > 0 && typed >= n[classText]:
			p[c] = classAny
			if n[classNumber] > 0 || n[classDate] > 0 {
				p[c] = classNumber
				if n[classDate] > n[classNumber] {
					p[c] = classDate
				}
			}
		case n[classText] > 0:
			p[c] = classText
		}
	}
	return p
}

func (p profile) at(c int) class {
	if c < len(p) {
		return p[c]
	}
	return classEmpty
}

// first is the first column with a value, or 0.
func (p profile) first() int {
	for c, k := range p {
		if k != classEmpty {
			return c
		}
	}
	return 0
}

// strong reports whether r is a row of data of a block of profile p: at
// least one cell typed as its column is, and no other kind in a typed
// column. Text columns take anything (codes may be digits).
func strong(r probeRow, p profile) bool {
	hits := 0
	for c := range r.texts {
		cl := r.class(c)
		if cl == classEmpty || !p.at(c).typed() {
			continue
		}
		if !cl.typed() || !cl.fits(p.at(c)) {
			return false
		}
		hits++
	}
	return hits > 0
}

// labelRow reports whether r can be (part of) the header of a block of
// profile p: text over at least one of its typed columns, and no other
// kind of cell but years along the row (labels of yearly columns) or
// dates along it over columns of another kind (labels of monthly ones).
func labelRow(r probeRow, p profile) bool {
	years, dates := yearLabels(r), dateLabels(r, p)
	over := len(years) + len(dates)
	for c := range r.texts {
		switch cl := r.class(c); {
		case cl == classEmpty || years[c] || dates[c]:
		case cl != classText:
			return false
		case p.at(c).typed():
			over++
		}
	}
	return over > 0
}

// dateLabels are the cells of a row that hold dates, rising from left
// to right, over columns that hold another kind: a header's labels of
// monthly or daily columns. It is empty unless there are at least two.
func dateLabels(r probeRow, p profile) map[int]bool {
	out := map[int]bool{}
	last := ""
	for c := range r.texts {
		if r.class(c) != classDate {
			continue
		}
		t := strings.TrimSpace(r.texts[c])
		if t <= last || p.at(c) == classDate || p.at(c) == classAny {
			return map[int]bool{}
		}
		out[c], last = true, t
	}
	if len(out) < 2 {
		return map[int]bool{}
	}
	return out
}

// dataLike reports whether r, a label row, reads as data all the same:
// its cells under typed columns marks of a missing value ("n/a", ".."),
// or a cell too long for a label.
func dataLike(r probeRow, p profile) bool {
	marks := 0
	for c, t := range r.texts {
		t = strings.TrimSpace(t)
		switch {
		case utf8.RuneCountInString(t) > maxLabelRunes:
			return true
		case t == "" || !p.at(c).typed():
		case typing.MissingMark(t):
			marks++
		default:
			return false
		}
	}
	return marks > 0
}

// maxLabelRunes is the longest a header's label is taken to be.
const maxLabelRunes = 200

// metaRow reports whether r reads as a download's metadata line: a cell
// that ends with a colon ("Unit:", "Source:").
func metaRow(r probeRow) bool {
	for _, t := range r.texts {
		if t = strings.TrimSpace(t); len(t) > 1 && strings.HasSuffix(t, ":") {
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

// dataStart finds, from rows[from] to rows[limit-1], the first row of a
// block: a strong row of the profile of the rows from it, followed in
// its run (no blank row between) by startRun rows that are strong too or
// hold a single label (a section). A row of rising years is a header,
// never data. It returns -1 when no row starts a block.
func dataStart(rows []probeRow, from, limit int) (int, profile) {
	for j := from; j < limit; j++ {
		if len(yearLabels(rows[j])) > 0 {
			continue
		}
		p := profileOf(rows[j:min(limit, j+profileRows)])
		if !strong(rows[j], p) {
			continue
		}
		ok := true
		for k := j + 1; ok && k < min(limit, j+1+startRun) && rows[k].gap == 0; k++ {
			ok = strong(rows[k], p) || rows[k].only() >= 0 && rows[k].label(rows[k].only())
		}
		if ok {
			return j, p
		}
	}
	return -1, nil
}

// layout is one table found in a sheet or file.
type layout struct {
	// above are the rows kept out above the header: titles, notes,
	// metadata lines.
	above []probeRow
	// header are the rows the header is made of, top to bottom (none:
	// columns are named by position); units is the one among them that
	// holds units, or -1.
	header []probeRow
	units  int
	// start and end are the row numbers of the table's first and last
	// rows (its header's, else its first data row's); end 0 runs to the
	// end of the sheet.
	start, end int
	// p is what each column holds; sections, that a label alone in a row
	// names the rows under it, a column of its own.
	p        profile
	sections bool
	// literal: the block has no typed data: its first row is the header
	// and every row under it is data; uncertain says why that header may
	// be wrong, when it may.
	literal   bool
	uncertain string
}

// findTables finds the tables of rows, a sheet's or file's first rows
// with a value. Each row belongs to one table or is kept out as above
// it; the last table runs on past rows to the end of the sheet.
func findTables(rows []probeRow) []layout {
	var out []layout
	for from := 0; from < len(rows); {
		j, p := dataStart(rows, from, len(rows))
		if j < 0 {
			out = append(out, literalTable(rows[from:]))
			break
		}
		t := tableAt(rows, from, j, p)
		next := nextTable(rows, j, p, t.header)
		if next < len(rows) {
			t.end = rows[next-1].row
		}
		out = append(out, smallTables(&t)...)
		out = append(out, t)
		from = next
	}
	if len(out) > 0 {
		out[len(out)-1].end = 0
	}
	return out
}

// literalTable is a block without typed data: the first row its header,
// the rest data, as the file is read literally.
func literalTable(rows []probeRow) layout {
	return layout{header: rows[:1], units: -1, start: rows[0].row, literal: true, uncertain: uncertainNote(rows)}
}

// askedTable is the one table under the header rows a person named: the
// rows above the first kept out, a units row among them read as one, and
// the rest of the sheet its data. missing is a row named that holds no
// value (0: none).
func askedTable(rows []probeRow, named []int) (t layout, missing int) {
	at := map[int]int{}
	for i, r := range rows {
		at[r.row] = i
	}
	idx := make([]int, len(named))
	for i, n := range named {
		j, ok := at[n]
		if !ok {
			return layout{}, n
		}
		idx[i] = j
	}
	top, h := idx[0], idx[len(idx)-1]
	t = layout{units: -1, start: rows[top].row}
	t.p = profileOf(rows[h+1 : min(len(rows), h+1+4*profileRows)])
	for _, j := range idx {
		t.header = append(t.header, rows[j])
	}
	for j := range rows[:h] {
		if !slices.Contains(idx, j) {
			t.above = append(t.above, rows[j])
		}
	}
	if n := len(t.header); n > 1 && unitsRow(t.header[n-1], t.header[n-2], t.p) {
		t.units = n - 1
	}
	if h+1 < len(rows) && sectionLabel(rows[h+1], t.p, true) {
		t.sections = true
	}
	return t, 0
}

// tableAt is the table whose data starts at rows[j], with the rows from
// rows[from] above it: its header rows, a section label between the
// header and the data, and what is kept out above.
func tableAt(rows []probeRow, from, j int, p profile) layout {
	t := layout{p: p, units: -1, start: rows[j].row}
	// The header is the nearest row above that can be one; rows between
	// are data of the block that did not start it (a note in a numeric
	// column, say), as is a label row that reads as data right under
	// another label row.
	h := j - 1
	for h >= from && !labelRow(rows[h], p) {
		h--
	}
	for h-1 >= from && rows[h].gap == 0 && dataLike(rows[h], p) && labelRow(rows[h-1], p) {
		h--
	}
	if h >= from && sectionLabel(rows[h], p, true) && h-1 >= from && labelRow(rows[h-1], p) && rows[h-1].width() >= 2 {
		t.sections = true
		h--
	}
	if h < from || h > from && strongRun(rows, j, p) < 2 {
		// No label above, or rows to keep out above a block of a single
		// row of data: too little evidence; the first row is the header,
		// as a file read literally has it.
		t.header, t.start, t.sections = rows[from:from+1], rows[from].row, false
		return t
	}
	top, units := headerRows(rows, from, h, p)
	for _, r := range rows[from:top] {
		if strong(r, p) {
			// A row above that looks like the block's rows is not kept
			// out: the block starts higher than its typed data tells.
			t.header, t.start, t.sections = rows[from:from+1], rows[from].row, false
			return t
		}
	}
	t.header = rows[top : h+1]
	if units >= 0 {
		t.units = units - top
	}
	t.above = rows[from:top]
	t.start = rows[top].row
	return t
}

// strongRun counts the strong rows from rows[j] on, with no blank row
// between them.
func strongRun(rows []probeRow, j int, p profile) int {
	n := 0
	for k := j; k < len(rows) && (k == j || rows[k].gap == 0) && strong(rows[k], p); k++ {
		n++
	}
	return n
}

// sectionLabel reports whether r is a label alone in a row of a block of
// profile p: its one cell text, under a typed column, or in the first
// column where labels name parts of the data (lead).
func sectionLabel(r probeRow, p profile, lead bool) bool {
	c := r.only()
	if c < 0 || !r.label(c) {
		return false
	}
	cols := 0
	for _, k := range p {
		if k != classEmpty {
			cols++
		}
	}
	return cols >= 2 && (p.at(c).typed() || lead && c == p.first())
}

// nextTable is where the table whose data starts at rows[j] ends: the
// first row of the next table, or len(rows). A second table starts
// after a blank row, with at most maxTitles titles, a header of two
// labels or more (not the first one's again), and a block of data
// directly under it.
func nextTable(rows []probeRow, j int, p profile, header []probeRow) int {
	for k := j + 1; k < len(rows); k++ {
		if rows[k].gap == 0 || strong(rows[k], p) {
			continue
		}
		s, p2 := dataStart(rows, k, min(len(rows), k+lookAhead))
		if s < 0 {
			continue
		}
		h := s - 1
		if h < k || !labelRow(rows[h], p2) || rows[h].width() < 2 || rows[s].gap > 0 {
			continue
		}
		if len(header) > 0 && sameTexts(rows[h].texts, header[len(header)-1].texts) {
			continue
		}
		top, _ := headerRows(rows, k, h, p2)
		if top-k > maxTitles {
			continue
		}
		titles := true
		for _, r := range rows[k:top] {
			titles = titles && r.width() == 1
		}
		if titles {
			return k
		}
	}
	return len(rows)
}

func sameTexts(a, b []string) bool {
	n := max(len(a), len(b))
	for i := range n {
		var x, y string
		if i < len(a) {
			x = strings.TrimSpace(a[i])
		}
		if i < len(b) {
			y = strings.TrimSpace(b[i])
		}
		if x != y {
			return false
		}
	}
	return true
}

// smallTables takes out of t's rows above the tables they hold: a run of
// two rows or more with no blank row between, its first row of two
// labels or more, that is not a download's metadata lines. Each is read
// as a file read literally is; the other rows stay kept out above t.
func smallTables(t *layout) []layout {
	var out []layout
	var kept []probeRow
	for i := 0; i < len(t.above); {
		k := i + 1
		for k < len(t.above) && t.above[k].gap == 0 {
			k++
		}
		run := t.above[i:k]
		if k < len(t.above) || t.header[0].gap > 0 {
			// A run directly above the header is its titles, never a
			// table.
			if smallTable(run) {
				s := literalTable(run)
				s.end = run[len(run)-1].row
				out = append(out, s)
				i = k
				continue
			}
		}
		kept = append(kept, run...)
		i = k
	}
	t.above = kept
	return out
}

func smallTable(run []probeRow) bool {
	if len(run) < 2 || run[0].width() < 2 {
		return false
	}
	meta := 0
	for _, r := range run {
		if metaRow(r) {
			meta++
		}
	}
	return meta*2 < len(run)
}
