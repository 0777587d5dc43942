package engine

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

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
}

// Rows returns a page of a table. Rows in file order unless sorted; sorted
// pages break ties by file order so paging is stable.
// Errors: not_found, invalid (offset, limit, sort, direction, filters,
// search).
func (s *Store) Rows(ctx context.Context, tableID string, req PageRequest) (*Page, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	if r, err := s.remoteOf(t); err != nil {
		return nil, err
	} else if r != nil {
		return r.Rows(ctx, t, req)
	}
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
	where, params := duckWhere(conds, search)
	order, reversed := "rowid", "rowid DESC"
	if req.Sort != "" {
		col, ok := t.column(req.Sort)
		if !ok {
			return nil, datadesk.Errorf(datadesk.Invalid, "unknown sort column %q", req.Sort).WithField("sort").WithAllowed(t.keys()...)
		}
		dir := "ASC"
		switch strings.ToLower(req.Direction) {
		case "", "asc":
		case "desc":
			dir = "DESC"
		default:
			return nil, datadesk.Errorf(datadesk.Invalid, "direction must be asc or desc").WithField("direction").WithAllowed("asc", "desc")
		}
		order = quoteIdent(col.Key) + " " + dir + " NULLS LAST, rowid"
		rev := map[string]string{"ASC": "DESC", "DESC": "ASC"}[dir]
		reversed = quoteIdent(col.Key) + " " + rev + " NULLS FIRST, rowid DESC"
		req.Direction = strings.ToLower(dir)
	} else {
		req.Direction = ""
	}
	from := `data.` + quoteIdent(t.ID)
	total := t.RowCount
	var q string
	args := params
	flip := false
	switch {
	case where == "" && req.Sort == "":
		// A stored table's row ids are its row positions: the last page
		// reads only its own rows, as fast as the first.
		q = `SELECT * FROM ` + from + ` WHERE rowid >= ? AND rowid < ? ORDER BY rowid`
		args = []any{req.Offset, req.Offset + int64(req.Limit)}
	default:
		cond := where
		if where != "" {
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+from+cond, params...).Scan(&total); err != nil {
				return nil, classify(ctx, err)
			}
		}
		q = `SELECT * FROM ` + from + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
		args = append(append([]any(nil), params...), req.Limit, req.Offset)
		if tail := total - req.Offset; req.Offset > total/2 && tail > 0 {
			// A page in the second half is read from the end in the
			// reverse order, so the last page sorts as few rows as the
			// first; its rows are put back in order below.
			n := min(int64(req.Limit), tail)
			q = `SELECT * FROM ` + from + cond + ` ORDER BY ` + reversed + ` LIMIT ? OFFSET ?`
			args = append(append([]any(nil), params...), n, tail-n)
			flip = true
		}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	p := &Page{TableID: t.ID, Columns: t.Columns, Rows: [][]any{}, Total: total, Offset: req.Offset, Limit: req.Limit, Sort: req.Sort, Direction: req.Direction}
	for rows.Next() {
		vals := make([]any, len(t.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		for i := range vals {
			vals[i] = JSONValue(vals[i], t.Columns[i].Type)
		}
		p.Rows = append(p.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	if flip {
		slices.Reverse(p.Rows)
	}
	p.HasMore = req.Offset+int64(len(p.Rows)) < total
	return p, nil
}

func (t *Table) column(key string) (Column, bool) {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Key, key) {
			return c, true
		}
	}
	return Column{}, false
}

func (t *Table) keys() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Key
	}
	return out
}

// TimestampLayout is how a timestamp is written as text everywhere data
// leaves the engine: ISO 8601 with the fractional seconds it has, up to
// microseconds (what a timestamp keeps).
const TimestampLayout = "2006-01-02T15:04:05.999999"

// JSONValue turns a scanned DuckDB value into what JSON should carry: numbers
// as numbers (decimals exactly, as json.Number), dates as ISO strings, text
// as strings, NULL as null.
func JSONValue(v any, typ string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		if typ == TypeDate {
			return x.Format("2006-01-02")
		}
		return x.Format(TimestampLayout)
	case duckdb.Decimal:
		return json.Number(decimalString(x))
	case *big.Int:
		return json.Number(x.String())
	case []byte:
		return string(x)
	}
	return v
}

func decimalString(d duckdb.Decimal) string {
	s := d.Value.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	scale := int(d.Scale)
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
