package engine

import (
	"context"
)

// QueryResult is files.query_table's answer: small, exact, and safe to put
// in a model's context. It carries what the next call needs and no more.
type QueryResult struct {
	FileID          string         `json:"file_id"`
	TableID         string         `json:"table_id"`
	SourceRowCount  int64          `json:"source_row_count"`
	MatchedRowCount int64          `json:"matched_row_count"`
	GroupCount      *int64         `json:"group_count,omitempty"`
	Aggregates      map[string]any `json:"aggregates,omitempty"`
	Columns         []string       `json:"columns,omitempty"`
	Rows            [][]any        `json:"rows,omitempty"`
	Offset          int            `json:"offset,omitempty"`
	// HasMore says whether rows or groups follow this page. A count or
	// aggregates, which return no rows, have no page and leave it out.
	HasMore *bool      `json:"has_more,omitempty"`
	Schema  SchemaPage `json:"schema"`
	// Hint says what to try when nothing matched and a near form exists.
	Hint string `json:"hint,omitempty"`
	// SQL is the statement that ran, for logs; the model does not need it.
	SQL  string `json:"-"`
	View *View  `json:"view,omitempty"`
}

// SchemaPage is a page of a table's columns, for wide tables.
type SchemaPage struct {
	Columns []SchemaColumn `json:"columns"`
	Offset  int            `json:"offset,omitempty"`
	// Total is the table's column count, given when the page does not
	// hold every column.
	Total   int  `json:"total,omitempty"`
	HasMore bool `json:"has_more,omitempty"`
}

// SchemaColumn is a column as a query answer shows it: what the next call
// needs. The reasons for its type stay in the table's schema.
type SchemaColumn struct {
	Key string `json:"key"`
	// Label is the header, given only where the key is not simply the
	// header written as a key ("Price/Earnings" is price_earnings).
	Label      string `json:"label,omitempty"`
	Type       string `json:"type"`
	Identifier bool   `json:"identifier,omitempty"`
}

func schemaColumn(c Column) SchemaColumn {
	sc := SchemaColumn{Key: c.Key, Type: c.Type, Identifier: c.Identifier}
	if c.Label != "" && keyOf(c.Label) != c.Key {
		sc.Label = c.Label
	}
	return sc
}

// View is what show=true displays: the original table or a derived one.
type View struct {
	TableID  string `json:"table_id"`
	FileID   string `json:"file_id"`
	Derived  bool   `json:"derived"`
	RowCount int64  `json:"row_count"`
	// PreviewURL is filled in by the API, which knows its routes.
	PreviewURL string `json:"preview_url,omitempty"`
}

// Run executes a plan. Errors: timeout when ctx ends first.
func (s *Store) Run(ctx context.Context, p *Plan) (*QueryResult, error) {
	if r, err := s.remoteOf(p.Table); err != nil {
		return nil, err
	} else if r != nil {
		res, err := r.Run(ctx, p)
		if err != nil {
			return nil, err
		}
		s.logger.Debug("query", "table", p.Table.ID, "backend", r.Name(), "sql", res.SQL)
		if res.MatchedRowCount == 0 && len(p.Query.Filters) > 0 {
			if res.Hint, err = hint(ctx, p, r.Near); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	q, params := p.SQL()
	s.logger.Debug("query", "table", p.Table.ID, "sql", q, "params", params)
	res := &QueryResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount,
		Offset: p.Offset, SQL: q, Schema: schemaPage(p.Table, p.Query.SchemaOffset)}
	var err error
	if p.Grouped() {
		err = s.runGrouped(ctx, p, res, q, params)
	} else {
		err = s.runUngrouped(ctx, p, res, q, params)
	}
	if err != nil {
		return nil, err
	}
	total := res.MatchedRowCount
	if p.Grouped() {
		total = *res.GroupCount
	}
	if res.MatchedRowCount == 0 && len(p.Query.Filters) > 0 {
		if res.Hint, err = hint(ctx, p, s.near); err != nil {
			return nil, err
		}
	}
	res.page(p, total)
	return res, nil
}

// runGrouped reads a grouped answer: the page's groups, each row carrying
// the counts; a page past the last group asks for the counts apart.
func (s *Store) runGrouped(ctx context.Context, p *Plan, res *QueryResult, q string, params []any) error {
	res.Columns = p.OutNames()
	res.Rows = [][]any{}
	width := len(res.Columns)
	var matched, groups int64
	err := s.scan(ctx, q, params, width+2, func(vals []any) {
		out := make([]any, width)
		for i, v := range vals[:width] {
			out[i] = JSONValue(v, p.OutType(i))
		}
		res.Rows = append(res.Rows, out)
		matched, groups = toInt64(vals[width]), toInt64(vals[width+1])
	})
	if err != nil {
		return err
	}
	if len(res.Rows) == 0 && p.Offset > 0 {
		cq, cparams := p.duckGroupCounts()
		err = s.scan(ctx, cq, cparams, 2, func(vals []any) { matched, groups = toInt64(vals[0]), toInt64(vals[1]) })
		if err != nil {
			return err
		}
	}
	res.MatchedRowCount, res.GroupCount = matched, &groups
	return nil
}

// runUngrouped reads an ungrouped answer: each row carries the matched
// count and the aggregates, then one row of the page, if any.
func (s *Store) runUngrouped(ctx context.Context, p *Plan, res *QueryResult, q string, params []any) error {
	if p.Limit > 0 {
		for _, c := range p.Cols {
			res.Columns = append(res.Columns, c.Key)
		}
	}
	res.Rows = [][]any{}
	width := 1 + len(p.Aggs)
	if p.Limit > 0 {
		width += 1 + len(p.Cols) + 1
		if p.Sort != nil {
			width++
		}
	}
	return s.scan(ctx, q, params, width, func(vals []any) {
		res.MatchedRowCount = toInt64(vals[0])
		if res.Aggregates == nil && len(p.Aggs) > 0 {
			res.Aggregates = map[string]any{}
			for i, a := range p.Aggs {
				res.Aggregates[a.Name] = JSONValue(vals[1+i], "")
			}
		}
		rest := vals[1+len(p.Aggs):]
		if len(rest) == 0 || rest[0] == nil {
			return
		}
		out := make([]any, len(p.Cols))
		for i := range p.Cols {
			out[i] = JSONValue(rest[1+i], p.Cols[i].Type)
		}
		res.Rows = append(res.Rows, out)
	})
}

// scan runs a statement and calls fn with each row's width values.
func (s *Store) scan(ctx context.Context, q string, params []any, width int, fn func(vals []any)) error {
	rows, err := s.db.QueryContext(ctx, q, params...)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	vals := make([]any, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return classify(ctx, err)
		}
		fn(vals)
	}
	return classify(ctx, rows.Err())
}

// page finishes an answer of total rows or groups: a page of rows or
// groups says whether more follow; a count or aggregate answer carries no
// rows and says nothing about more.
func (res *QueryResult) page(p *Plan, total int64) {
	if p.Grouped() || p.Limit > 0 {
		more := int64(p.Offset+len(res.Rows)) < total
		res.HasMore = &more
		return
	}
	res.Rows, res.Columns, res.Offset = nil, nil, 0
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return 0
}

func schemaPage(t *Table, offset int) SchemaPage {
	sp := SchemaPage{Offset: offset, Columns: []SchemaColumn{}}
	if offset < len(t.Columns) {
		end := min(offset+SchemaPageSize, len(t.Columns))
		for _, c := range t.Columns[offset:end] {
			sp.Columns = append(sp.Columns, schemaColumn(c))
		}
		sp.HasMore = end < len(t.Columns)
	}
	if offset > 0 || sp.HasMore {
		sp.Total = len(t.Columns)
	}
	return sp
}
