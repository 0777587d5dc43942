package ingest

import (
	"fmt"
	"slices"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// Where a kept-out row was, as the import report says.
const (
	keptAbove   = "above"   // above the header: a title, a note, a metadata line
	keptBelow   = "below"   // below the data: a note or footnote
	keptSection = "section" // a label alone in a row inside the data
	keptRepeat  = "repeated header"
	keptAsked   = "asked" // a row the person reading the file named
)

// blockReader sorts the rows of one table as they stream, after its
// header: rows of data; a label alone in a row under a typed column (a
// section), which names the rows under it in a column of their own when
// the data starts with one (layout.sections), else is kept out; the
// header repeated inside the data, kept out; and rows that may be notes,
// held until a row of data follows them (data after all) or the table
// ends (notes below, kept out). A table without typed data (literal)
// keeps every row.
type blockReader struct {
	t         layout
	labels    []string // the header's label row
	width     int      // labels in it
	narrowest int      // the narrowest row of data so far
	keepEmpty bool     // a CSV file's empty records are rows of the table
	skip      map[int]bool
	section   string
	held      []probeRow
	kept      []catalog.SkippedRow
	texts     []string
	kinds     []typing.CellKind
	pass      func(texts []string, kinds []typing.CellKind) error
	// onData, when set, is told each row of data's number.
	onData func(row int)
}

func newBlockReader(t layout, skip map[int]bool, keepEmpty bool, pass func([]string, []typing.CellKind) error) *blockReader {
	b := &blockReader{t: t, skip: skip, keepEmpty: keepEmpty, pass: pass}
	if n := len(t.header); n > 0 {
		last := t.header[n-1]
		if t.units == n-1 && n > 1 {
			last = t.header[n-2]
		}
		texts := 0
		for c := range last.texts {
			if last.label(c) {
				texts++
			}
		}
		if texts >= 2 {
			// A header of labels may be repeated in the data; a first
			// row of values taken as the header is a row like the others.
			b.labels = last.texts
		}
		if !t.literal {
			// The table is as wide as its header or its columns of data.
			b.width = last.width()
			cols := 0
			for _, k := range t.p {
				if k != classEmpty {
					cols++
				}
			}
			b.width = max(b.width, cols)
		}
	}
	b.narrowest = b.width
	return b
}

// add takes row r, whose slices may be reused once it returns.
func (b *blockReader) add(r probeRow) error {
	switch {
	case r.width() == 0:
		if b.keepEmpty {
			return b.hold(r)
		}
		return nil
	case b.skip[r.row]:
		b.kept = append(b.kept, skippedRow(r, keptAsked))
		return nil
	case b.t.literal:
		return b.data(r)
	case b.labels != nil && sameTexts(r.texts, b.labels):
		b.kept = append(b.kept, skippedRow(r, keptRepeat))
		return nil
	case sectionLabel(r, b.t.p, b.t.sections) || noteRow(r, b.width, b.narrowest):
		return b.hold(r)
	}
	for _, h := range b.held {
		if err := b.flush(h); err != nil {
			return err
		}
	}
	b.held = b.held[:0]
	return b.data(r)
}

// hold keeps a row that may be a note or a section's label until the
// next row of data. Past tailRows rows held, the first is data after all.
func (b *blockReader) hold(r probeRow) error {
	r.texts, r.kinds = slices.Clone(r.texts), slices.Clone(r.kinds)
	b.held = append(b.held, r)
	if len(b.held) <= tailRows {
		return nil
	}
	first := b.held[0]
	b.held = b.held[1:]
	return b.flush(first)
}

// tailRows bounds the rows held as possible notes.
const tailRows = 20

// flush hands on a held row that a row of data followed: a section's
// label names the rows after it, any other row is data.
func (b *blockReader) flush(h probeRow) error {
	if h.width() > 0 && sectionLabel(h, b.t.p, b.t.sections) {
		b.section = strings.TrimSpace(h.texts[h.only()])
		b.kept = append(b.kept, skippedRow(h, keptSection))
		return nil
	}
	return b.data(h)
}

func (b *blockReader) data(r probeRow) error {
	if w := r.width(); w > 0 {
		b.narrowest = min(b.narrowest, w)
	}
	if b.onData != nil {
		b.onData(r.row)
	}
	if !b.t.sections {
		return b.pass(r.texts, r.kinds)
	}
	b.texts = append(append(b.texts[:0], b.section), r.texts...)
	b.kinds = append(b.kinds[:0], typing.KindText)
	if r.kinds != nil {
		b.kinds = append(b.kinds, r.kinds...)
	} else {
		b.kinds = nil
	}
	if b.section == "" && b.kinds != nil {
		b.kinds[0] = typing.KindEmpty
	}
	return b.pass(b.texts, b.kinds)
}

// end takes the end of the table: the rows still held are notes below
// it, kept out, but for empty ones.
func (b *blockReader) end() []catalog.SkippedRow {
	for _, h := range b.held {
		if h.width() > 0 {
			b.kept = append(b.kept, skippedRow(h, keptBelow))
		}
	}
	b.held = nil
	return b.kept
}

// keptNote says in words what was kept out of a table and how its
// header was read, for readers of the notes.
func keptNote(above, kept []catalog.SkippedRow, hdr header, sections, asked bool) string {
	var parts []string
	count := map[string]int{}
	for _, k := range kept {
		count[k.Where]++
	}
	as := ""
	if asked {
		as = ", as asked"
	}
	switch {
	case len(hdr.rows) > 1:
		parts = append(parts, fmt.Sprintf("the header is rows %d to %d%s, their labels joined", hdr.rows[0], hdr.rows[len(hdr.rows)-1], as))
	case (len(above) > 0 || asked) && len(hdr.rows) == 1:
		parts = append(parts, fmt.Sprintf("the header is row %d%s", hdr.rows[0], as))
	}
	if len(above) > 0 {
		parts = append(parts, fmt.Sprintf("%s above it kept out of the table", rowsWord(len(above))))
	}
	if n := count[keptSection]; n > 0 && sections {
		parts = append(parts, fmt.Sprintf("%s holding a label alone named the rows under them: the column section holds it", rowsWord(n)))
	} else if n > 0 {
		parts = append(parts, fmt.Sprintf("%s holding a label alone inside the data kept out", rowsWord(n)))
	}
	if n := count[keptRepeat]; n > 0 {
		parts = append(parts, fmt.Sprintf("%s repeating the header kept out", rowsWord(n)))
	}
	if n := count[keptBelow]; n > 0 {
		parts = append(parts, fmt.Sprintf("%s of notes below the table kept out", rowsWord(n)))
	}
	if n := count[keptAsked]; n > 0 {
		parts = append(parts, fmt.Sprintf("%s kept out as asked", rowsWord(n)))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " (skipped_rows lists each)"
}
