package catalog

import (
	"strings"

	"datadesk"
)

// Browsing limits.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// Page is a page of a table's rows for browsing.
type Page struct {
	TableID   string   `json:"table_id"`
	Columns   []Column `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Total     int64    `json:"total"`
	Offset    int64    `json:"offset"`
	Limit     int      `json:"limit"`
	Sort      string   `json:"sort,omitempty"`
	Direction string   `json:"direction,omitempty"`
	HasMore   bool     `json:"has_more"`
}

// PageRequest says which rows to return.
type PageRequest struct {
	Offset    int64
	Limit     int
	Sort      string // a column key; "" keeps file order
	Direction string // asc or desc
	// Filters keep only matching rows, as in files.query_table.
	Filters []Filter
	// Search keeps rows where any text column contains it, ignoring case.
	Search string
	// Columns are the keys of the columns to answer, in their order; none
	// answers every column in the table's order.
	Columns []string
}

// PagePlan is a checked PageRequest: the page's bounds, its filters and
// search as conditions, and its order. Each backend compiles it.
type PagePlan struct {
	Table  *Table
	Offset int64
	Limit  int
	Conds  []Cond
	Search *Search
	// Sort is the column rows are ordered by (ties in file order), nil for
	// file order; Desc orders it descending, empty cells last either way.
	Sort *Column
	Desc bool
	// Cols are the columns answered, at their positions in the table
	// (At); nil for every column in the table's order.
	Cols []Column
	At   []int
	// Req is the request, as the page echoes it.
	Req PageRequest
}

// PagePlanFor checks req against table t. Errors: invalid (offset, limit,
// sort, direction, filters, search).
func PagePlanFor(t *Table, req PageRequest) (*PagePlan, error) {
	if req.Limit == 0 {
		req.Limit = DefaultPageSize
	}
	if req.Limit < 1 || req.Limit > MaxPageSize {
		return nil, datadesk.Errorf(datadesk.Invalid, "limit must be between 1 and %d", MaxPageSize).WithField("limit")
	}
	if req.Offset < 0 {
		return nil, datadesk.Errorf(datadesk.Invalid, "offset must be 0 or more").WithField("offset")
	}
	conds, search, err := CheckFilters(t, req.Filters, req.Search)
	if err != nil {
		return nil, err
	}
	p := &PagePlan{Table: t, Offset: req.Offset, Limit: req.Limit, Conds: conds, Search: search}
	if p.Cols, p.At, err = t.Choose(req.Columns); err != nil {
		return nil, err
	}
	req.Direction = strings.ToLower(req.Direction)
	if req.Sort == "" {
		req.Direction = ""
		p.Req = req
		return p, nil
	}
	col, ok := t.Lookup(req.Sort)
	if !ok {
		return nil, datadesk.Errorf(datadesk.Invalid, "unknown sort column %q", req.Sort).WithField("sort").WithAllowed(t.Keys()...)
	}
	switch req.Direction {
	case "", "asc":
		req.Direction = "asc"
	case "desc":
		p.Desc = true
	default:
		return nil, datadesk.Errorf(datadesk.Invalid, "direction must be asc or desc").WithField("direction").WithAllowed("asc", "desc")
	}
	p.Sort, p.Req = &col, req
	return p, nil
}

// Filtered reports whether some rows may not match.
func (p *PagePlan) Filtered() bool { return len(p.Conds) > 0 || p.Search != nil }

// Page is the answer of rows of total matching ones, each row of every
// column of the table, answered with the plan's columns.
func (p *PagePlan) Page(rows [][]any, total int64) *Page {
	if rows == nil {
		rows = [][]any{}
	}
	cols := p.Table.Columns
	if p.Cols != nil {
		cols = p.Cols
		for i, r := range rows {
			out := make([]any, len(p.At))
			for j, at := range p.At {
				out[j] = r[at]
			}
			rows[i] = out
		}
	}
	return &Page{TableID: p.Table.ID, Columns: cols, Rows: rows, Total: total, Offset: p.Offset, Limit: p.Limit,
		Sort: p.Req.Sort, Direction: p.Req.Direction, HasMore: p.Offset+int64(len(rows)) < total}
}

// Choose resolves keys to t's columns and their positions, in the order
// given; none is every column (nil, nil). Errors: invalid (columns: a
// key twice or not of the table).
func (t *Table) Choose(keys []string) ([]Column, []int, error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	var cols []Column
	var at []int
	seen := map[int]bool{}
	for _, k := range keys {
		i := t.position(k)
		switch {
		case i < 0:
			return nil, nil, datadesk.Errorf(datadesk.Invalid, "unknown column %q", k).WithField("columns").WithAllowed(t.Keys()...)
		case seen[i]:
			return nil, nil, datadesk.Errorf(datadesk.Invalid, "column %q is chosen twice", k).WithField("columns")
		}
		seen[i] = true
		cols, at = append(cols, t.Columns[i]), append(at, i)
	}
	return cols, at, nil
}

// position is the position of t's column of key, compared without case,
// or -1.
func (t *Table) position(key string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Key, key) {
			return i
		}
	}
	return -1
}

// Lookup returns t's column of key, compared without case.
func (t *Table) Lookup(key string) (Column, bool) {
	if i := t.position(key); i >= 0 {
		return t.Columns[i], true
	}
	return Column{}, false
}

// Keys returns the keys of t's columns, in order.
func (t *Table) Keys() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Key
	}
	return out
}
