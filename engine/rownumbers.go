package engine

// maxRowRuns bounds the runs a RowNumbers keeps: past it, rows are no
// longer known (Row answers 0).
const maxRowRuns = 1 << 20

// RowNumbers maps the rows a source yields, in order, to their numbers in
// its sheet or file, kept as runs of consecutive rows: a table read
// whole from a sheet is one run.
type RowNumbers struct {
	runs []rowRun
	n    int64
	full bool
}

// rowRun is a run of rows: the ordinal of its first yielded row and
// that row's number.
type rowRun struct{ ordinal, row int64 }

// Add records that the next row yielded is row.
func (r *RowNumbers) Add(row int64) {
	if r.full {
		return
	}
	if k := len(r.runs); k == 0 || r.runs[k-1].row+(r.n-r.runs[k-1].ordinal) != row {
		if k == maxRowRuns {
			r.full = true
			return
		}
		r.runs = append(r.runs, rowRun{ordinal: r.n, row: row})
	}
	r.n++
}

// Row is the number of the row yielded at ordinal (from 0), or 0 when it
// is not known.
func (r *RowNumbers) Row(ordinal int64) int64 {
	if r == nil || r.full || ordinal < 0 || ordinal >= r.n {
		return 0
	}
	lo, hi := 0, len(r.runs)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if r.runs[mid].ordinal <= ordinal {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return r.runs[lo].row + ordinal - r.runs[lo].ordinal
}
