package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"datadesk"
)

// Limits of files.query_table, as its schema states them.
const (
	MaxFilters       = 20
	MaxInValues      = 100
	MaxGroupBy       = 3
	MaxAggregates    = 12
	MaxQueryRows     = 20
	MaxQueryOffset   = 100000
	SchemaPageSize   = 50
	defaultGroupPage = 20
)

// Query is a files.query_table call's arguments, already checked against
// the tool's schema. Filter values are nil, bool, json.Number, string or
// []any of those.
type Query struct {
	FileID       string      `json:"file_id"`
	Filters      []Filter    `json:"filters,omitempty"`
	Columns      []string    `json:"columns,omitempty"`
	GroupBy      []string    `json:"group_by,omitempty"`
	Aggregates   []Aggregate `json:"aggregates,omitempty"`
	SortBy       string      `json:"sort_by,omitempty"`
	Direction    string      `json:"direction,omitempty"`
	Offset       int         `json:"offset,omitempty"`
	Limit        int         `json:"limit,omitempty"`
	SchemaOffset int         `json:"schema_offset,omitempty"`
	Show         bool        `json:"show,omitempty"`
	// Search keeps rows where any text column contains it, ignoring case.
	// The web page sets it; files.query_table does not take it.
	Search string `json:"-"`
}

// Filter is one condition; conditions are AND-ed.
type Filter struct {
	Column string `json:"column"`
	Op     string `json:"op"`
	Value  any    `json:"value"`
}

// Aggregate is one of count, sum, avg, min, max, optionally named.
type Aggregate struct {
	Op     string `json:"op"`
	Column string `json:"column,omitempty"`
	Name   string `json:"name,omitempty"`
}

// Plan is a checked query: every name resolved against the table, every
// value converted to the column's type, ready to become one statement.
type Plan struct {
	Table   *Table
	Query   Query
	grouped bool
	where   []string
	params  []any
	groups  []Column
	aggs    []planAgg
	rowCols []Column
	order   []string // ORDER BY terms over output aliases or source columns
	sortCol *Column  // ungrouped sort column, if any
	dir     string
	limit   int
}

type planAgg struct {
	Name string
	Op   string
	Col  *Column
}

// Derived reports whether the query's result differs from the table: it
// filters or groups. Showing a derived result makes a new table.
func (p *Plan) Derived() bool { return len(p.where) > 0 || p.grouped }

func qerr(field, format string, args ...any) *datadesk.Error {
	return datadesk.Errorf(datadesk.Invalid, format, args...).WithField(field)
}

// Plan checks q against the owner's catalog and returns its plan.
// Errors: not_found (file_id), invalid (any argument, naming it).
func (s *Store) Plan(ctx context.Context, q Query) (*Plan, error) {
	t, err := s.Table(ctx, q.FileID)
	if err != nil {
		return nil, err
	}
	return planFor(t, q)
}

func planFor(t *Table, q Query) (*Plan, error) {
	p := &Plan{Table: t, Query: q, grouped: len(q.GroupBy) > 0}
	col := func(field, key string) (*Column, error) {
		for i := range t.Columns {
			if t.Columns[i].Key == key {
				return &t.Columns[i], nil
			}
		}
		return nil, qerr(field, "unknown column %q; valid keys: %s", key, strings.Join(t.keys(), ", ")).WithAllowed(t.keys()...)
	}
	if q.Limit < 0 || q.Limit > MaxQueryRows {
		return nil, qerr("limit", "limit must be from 0 to %d", MaxQueryRows)
	}
	if q.Offset < 0 || q.Offset > MaxQueryOffset {
		return nil, qerr("offset", "offset must be from 0 to %d", MaxQueryOffset)
	}
	if q.SchemaOffset < 0 || q.SchemaOffset > 255 {
		return nil, qerr("schema_offset", "schema_offset must be from 0 to 255")
	}
	if len(q.Filters) > MaxFilters {
		return nil, qerr("filters", "at most %d filters are allowed", MaxFilters)
	}
	for i, f := range q.Filters {
		field := fmt.Sprintf("filters[%d]", i)
		c, err := col(field+".column", f.Column)
		if err != nil {
			return nil, err
		}
		cond, params, err := filterSQL(field, c, f)
		if err != nil {
			return nil, err
		}
		p.where = append(p.where, cond)
		p.params = append(p.params, params...)
	}
	if q.Search != "" {
		cond, params, err := searchSQL(t, q.Search)
		if err != nil {
			return nil, err
		}
		p.where = append(p.where, cond)
		p.params = append(p.params, params...)
	}
	if len(q.GroupBy) > MaxGroupBy {
		return nil, qerr("group_by", "at most %d group_by columns are allowed", MaxGroupBy)
	}
	outNames := map[string]string{} // output name -> field that named it
	for i, g := range q.GroupBy {
		field := fmt.Sprintf("group_by[%d]", i)
		c, err := col(field, g)
		if err != nil {
			return nil, err
		}
		if _, dup := outNames[strings.ToLower(c.Key)]; dup {
			return nil, qerr(field, "column %q is grouped twice", g)
		}
		outNames[strings.ToLower(c.Key)] = field
		p.groups = append(p.groups, *c)
	}
	if len(q.Aggregates) > MaxAggregates {
		return nil, qerr("aggregates", "at most %d aggregates are allowed", MaxAggregates)
	}
	aggs := q.Aggregates
	if p.grouped && len(aggs) == 0 {
		aggs = []Aggregate{{Op: "count"}}
	}
	for i, a := range aggs {
		field := fmt.Sprintf("aggregates[%d]", i)
		pa := planAgg{Op: a.Op, Name: a.Name}
		if a.Column != "" {
			c, err := col(field+".column", a.Column)
			if err != nil {
				return nil, err
			}
			pa.Col = c
		}
		switch a.Op {
		case "count":
		case "sum", "avg", "min", "max":
			if pa.Col == nil {
				return nil, qerr(field+".column", "%s needs a column", a.Op)
			}
			if !Numeric(pa.Col.Type) {
				return nil, qerr(field+".column", "%s needs a numeric column; %q is %s", a.Op, pa.Col.Key, pa.Col.Type).
					WithAllowed(numericKeys(t)...)
			}
		default:
			return nil, qerr(field+".op", "unknown aggregate %q", a.Op).WithAllowed("count", "sum", "avg", "min", "max")
		}
		if pa.Name == "" {
			pa.Name = a.Op
			if pa.Col != nil {
				pa.Name = a.Op + "_" + pa.Col.Key
			}
		}
		// Names become column names of a shown view, which DuckDB
		// compares case-insensitively.
		if prev, dup := outNames[strings.ToLower(pa.Name)]; dup {
			return nil, qerr(field+".name", "name %q is already used by %s; give each aggregate a unique name", pa.Name, prev)
		}
		outNames[strings.ToLower(pa.Name)] = field
		p.aggs = append(p.aggs, pa)
	}
	if len(q.Columns) > 0 && p.grouped {
		return nil, qerr("columns", "columns picks the columns of rows; with group_by the result is the group columns and aggregates")
	}
	for i, k := range q.Columns {
		c, err := col(fmt.Sprintf("columns[%d]", i), k)
		if err != nil {
			return nil, err
		}
		p.rowCols = append(p.rowCols, *c)
	}
	if len(p.rowCols) == 0 && !p.grouped {
		p.rowCols = t.Columns
	}

	dir := "ASC"
	switch q.Direction {
	case "", "asc":
	case "desc":
		dir = "DESC"
	default:
		return nil, qerr("direction", "direction must be asc or desc").WithAllowed("asc", "desc")
	}
	if p.grouped {
		if q.SortBy != "" {
			idx := -1
			var allowed []string
			for i, g := range p.groups {
				allowed = append(allowed, g.Key)
				if g.Key == q.SortBy {
					idx = i
				}
			}
			for i, a := range p.aggs {
				allowed = append(allowed, a.Name)
				if a.Name == q.SortBy && idx < 0 {
					idx = len(p.groups) + i
				}
			}
			if idx < 0 {
				return nil, qerr("sort_by", "sort_by %q is neither a group_by column nor an aggregate name", q.SortBy).WithAllowed(allowed...)
			}
			p.order = append(p.order, fmt.Sprintf("%s %s NULLS LAST", outAlias(idx), dir))
		}
		// Ties break on the group columns, which are unique per group.
		for i := range p.groups {
			p.order = append(p.order, outAlias(i)+" ASC NULLS LAST")
		}
		p.limit = q.Limit
		if p.limit == 0 {
			p.limit = defaultGroupPage
		}
	} else {
		if q.SortBy != "" {
			c, err := col("sort_by", q.SortBy)
			if err != nil {
				return nil, err
			}
			p.sortCol, p.dir = c, dir
			p.order = append(p.order, fmt.Sprintf("%s %s NULLS LAST", quoteIdent(c.Key), dir))
		}
		// Ties break on file order, so offset pages reliably.
		p.order = append(p.order, quoteIdent(rowKey)+" ASC")
		p.limit = q.Limit
	}
	return p, nil
}

// rowKey names the row number carried through the query for file order.
const rowKey = "__row"

func outAlias(i int) string { return `"o` + strconv.Itoa(i+1) + `"` }

// Numeric reports whether a column type holds numbers.
func Numeric(typ string) bool {
	return typ == TypeInteger || typ == TypeDecimal || typ == TypeDouble
}

func numericKeys(t *Table) []string {
	var out []string
	for _, c := range t.Columns {
		if Numeric(c.Type) {
			out = append(out, c.Key)
		}
	}
	return out
}

// filterSQL turns one filter into a condition with bound values. Text is
// compared case-insensitively; numbers as numbers; dates as dates.
func filterSQL(field string, c *Column, f Filter) (string, []any, error) {
	col := quoteIdent(c.Key)
	vfield := field + ".value"
	if f.Op == "is_null" {
		b, ok := f.Value.(bool)
		if !ok {
			return "", nil, qerr(vfield, "is_null takes true or false")
		}
		if b {
			return col + " IS NULL", nil, nil
		}
		return col + " IS NOT NULL", nil, nil
	}
	if f.Op == "in" {
		list, ok := f.Value.([]any)
		if !ok {
			return "", nil, qerr(vfield, "in takes an array of up to %d values", MaxInValues)
		}
		if len(list) == 0 || len(list) > MaxInValues {
			return "", nil, qerr(vfield, "in takes 1 to %d values, not %d", MaxInValues, len(list))
		}
		lhs, place := operand(c)
		var params []any
		marks := make([]string, len(list))
		for i, v := range list {
			pv, err := convert(fmt.Sprintf("%s[%d]", vfield, i), c, v)
			if err != nil {
				return "", nil, err
			}
			params = append(params, pv)
			marks[i] = place
		}
		return lhs + " IN (" + strings.Join(marks, ", ") + ")", params, nil
	}
	if _, isList := f.Value.([]any); isList {
		return "", nil, qerr(vfield, "%s takes one value; only in takes an array", f.Op)
	}
	if f.Value == nil {
		return "", nil, qerr(vfield, "value is null; to match empty cells use op is_null with true")
	}
	if f.Op == "contains" {
		s := textOf(f.Value)
		return "contains(lower(CAST(" + col + " AS VARCHAR)), lower(?))", []any{s}, nil
	}
	lhs, place := operand(c)
	pv, err := convert(vfield, c, f.Value)
	if err != nil {
		return "", nil, err
	}
	switch f.Op {
	case "eq":
		return lhs + " = " + place, []any{pv}, nil
	case "ne":
		return lhs + " IS DISTINCT FROM " + place, []any{pv}, nil
	case "gt", "gte", "lt", "lte":
		if c.Type == TypeBoolean {
			return "", nil, qerr(field+".op", "%s does not apply to boolean column %q; use eq or ne", f.Op, c.Key)
		}
		sym := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[f.Op]
		return lhs + " " + sym + " " + place, []any{pv}, nil
	}
	return "", nil, qerr(field+".op", "unknown op %q", f.Op).WithAllowed("eq", "ne", "contains", "gt", "gte", "lt", "lte", "in", "is_null")
}

// operand returns how a column and a bound value are compared.
func operand(c *Column) (lhs, place string) {
	col := quoteIdent(c.Key)
	switch c.Type {
	case TypeInteger, TypeDecimal, TypeDouble:
		return col, "CAST(? AS DOUBLE)"
	case TypeDate:
		return col, "CAST(? AS DATE)"
	case TypeTimestamp:
		return col, "CAST(? AS TIMESTAMP)"
	case TypeBoolean:
		return col, "?"
	}
	return "lower(" + col + ")", "lower(?)"
}

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// convert reads a filter value as the column's type. Identifiers are text:
// a JSON number 123 is the text "123", never 0123.
func convert(field string, c *Column, v any) (any, error) {
	bad := func() error {
		return qerr(field, "value %s cannot be read as %s for column %q", jsonText(v), c.Type, c.Key)
	}
	if v == nil {
		return nil, qerr(field, "value is null; to match empty cells use op is_null")
	}
	switch c.Type {
	case TypeInteger, TypeDecimal, TypeDouble:
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = strings.TrimSpace(x)
		default:
			return nil, bad()
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, bad()
		}
		return f, nil
	case TypeDate:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return nil, qerr(field, "value %q cannot be read as a date for column %q; use YYYY-MM-DD", s, c.Key)
		}
		return s, nil
	case TypeTimestamp:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		// Fractional seconds parse without a layout saying so; a time with
		// a zone compares in UTC, as such times are stored.
		for _, l := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05",
			"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05-0700"} {
			if d, err := time.Parse(l, s); err == nil {
				return d.UTC().Format("2006-01-02 15:04:05.999999999"), nil
			}
		}
		return nil, qerr(field, "value %q cannot be read as a timestamp for column %q; use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS", s, c.Key)
	case TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(strings.ToLower(x)); err == nil && (strings.EqualFold(x, "true") || strings.EqualFold(x, "false")) {
				return b, nil
			}
		}
		return nil, bad()
	}
	return textOf(v), nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func aggSQL(a planAgg) string {
	if a.Op == "count" {
		if a.Col == nil {
			return "count(*)"
		}
		return "count(" + quoteIdent(a.Col.Key) + ")"
	}
	return a.Op + "(" + quoteIdent(a.Col.Key) + ")"
}

func (p *Plan) source() string {
	s := `SELECT *, rowid AS ` + quoteIdent(rowKey) + ` FROM data.` + quoteIdent(p.Table.ID)
	if len(p.where) > 0 {
		s += ` WHERE ` + strings.Join(p.where, " AND ")
	}
	return s
}

// SQL returns the one statement that answers the query, and its bound
// values. Its result has one row (or one per returned row or group): the
// matched count, the group count or the aggregates, then the page.
func (p *Plan) SQL() (string, []any) {
	var b strings.Builder
	params := slices.Clone(p.params)
	b.WriteString("WITH m AS (" + p.source() + ")")
	if p.grouped {
		b.WriteString(", g AS (SELECT ")
		var keys []string
		for i, g := range p.groups {
			b.WriteString(quoteIdent(g.Key) + " AS " + outAlias(i) + ", ")
			keys = append(keys, quoteIdent(g.Key))
		}
		for i, a := range p.aggs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(aggSQL(a) + " AS " + outAlias(len(p.groups)+i))
		}
		b.WriteString(" FROM m GROUP BY " + strings.Join(keys, ", ") + ")")
		b.WriteString(" SELECT (SELECT count(*) FROM m) AS matched, (SELECT count(*) FROM g) AS groups, p.*")
		b.WriteString(" FROM (SELECT 1) AS one LEFT JOIN (SELECT 1 AS present, * FROM g ORDER BY " + strings.Join(p.order, ", ") + " LIMIT ? OFFSET ?) AS p ON true")
		// The page is sorted again after the join, which keeps no order.
		b.WriteString(" ORDER BY " + strings.Join(p.order, ", "))
		params = append(params, p.limit, p.Query.Offset)
		return b.String(), params
	}
	b.WriteString(", a AS (SELECT count(*) AS matched")
	for i, a := range p.aggs {
		b.WriteString(", " + aggSQL(a) + " AS " + outAlias(i))
	}
	b.WriteString(" FROM m)")
	if p.limit == 0 {
		b.WriteString(" SELECT * FROM a")
		return b.String(), params
	}
	b.WriteString(" SELECT a.*, p.* FROM a LEFT JOIN (SELECT 1 AS present")
	for i, c := range p.rowCols {
		b.WriteString(", " + quoteIdent(c.Key) + " AS " + `"r` + strconv.Itoa(i+1) + `"`)
	}
	b.WriteString(`, ` + quoteIdent(rowKey) + ` AS "z0"`)
	outer := `"z0"`
	if p.sortCol != nil {
		b.WriteString(`, ` + quoteIdent(p.sortCol.Key) + ` AS "z1"`)
		outer = `"z1" ` + p.dir + ` NULLS LAST, "z0"`
		b.WriteString(" FROM m ORDER BY " + strings.Join(p.order, ", "))
		b.WriteString(" LIMIT ? OFFSET ?")
		params = append(params, p.limit, p.Query.Offset)
	} else if len(p.where) == 0 {
		// Unfiltered, in file order: a stored table's row ids are its row
		// positions, so the page starts at its row id instead of sorting
		// every row before it.
		b.WriteString(` FROM m WHERE "__row" >= ? AND "__row" < ? ORDER BY "__row"`)
		params = append(params, p.Query.Offset, p.Query.Offset+p.limit)
	} else {
		b.WriteString(" FROM m ORDER BY " + strings.Join(p.order, ", ") + " LIMIT ? OFFSET ?")
		params = append(params, p.limit, p.Query.Offset)
	}
	b.WriteString(") AS p ON true ORDER BY " + outer)
	return b.String(), params
}

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
		if res.MatchedRowCount == 0 && len(p.Query.Filters) > 0 {
			if res.Hint, err = hint(ctx, p, r.Near); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	q, params := p.SQL()
	rows, err := s.db.QueryContext(ctx, q, params...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	res := &QueryResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount,
		Offset: p.Query.Offset, SQL: q, Schema: schemaPage(p.Table, p.Query.SchemaOffset)}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if p.grouped {
		for _, g := range p.groups {
			res.Columns = append(res.Columns, g.Key)
		}
	} else if p.limit > 0 {
		for _, c := range p.rowCols {
			res.Columns = append(res.Columns, c.Key)
		}
	}
	for _, a := range p.aggs {
		if p.grouped {
			res.Columns = append(res.Columns, a.Name)
		}
	}
	res.Rows = [][]any{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		res.MatchedRowCount = toInt64(vals[0])
		var page []any
		if p.grouped {
			n := toInt64(vals[1])
			res.GroupCount = &n
			if vals[2] == nil {
				continue
			}
			page = vals[3:]
			out := make([]any, len(page))
			for i, v := range page {
				out[i] = JSONValue(v, outType(p, i))
			}
			res.Rows = append(res.Rows, out)
			continue
		}
		if res.Aggregates == nil && len(p.aggs) > 0 {
			res.Aggregates = map[string]any{}
			for i, a := range p.aggs {
				res.Aggregates[a.Name] = JSONValue(vals[1+i], "")
			}
		}
		rest := vals[1+len(p.aggs):]
		if len(rest) == 0 || rest[0] == nil {
			continue
		}
		out := make([]any, len(p.rowCols))
		for i := range p.rowCols {
			out[i] = JSONValue(rest[1+i], p.rowCols[i].Type)
		}
		res.Rows = append(res.Rows, out)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	total := res.MatchedRowCount
	if p.grouped {
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

// page finishes an answer of total rows or groups: a page of rows or
// groups says whether more follow; a count or aggregate answer carries no
// rows and says nothing about more.
func (res *QueryResult) page(p *Plan, total int64) {
	if p.grouped || p.limit > 0 {
		more := int64(p.Query.Offset+len(res.Rows)) < total
		res.HasMore = &more
		return
	}
	res.Rows, res.Columns, res.Offset = nil, nil, 0
}

// outType is the catalog type of output column i of a grouped result.
func outType(p *Plan, i int) string {
	if i < len(p.groups) {
		return p.groups[i].Type
	}
	return aggType(p.aggs[i-len(p.groups)])
}

func aggType(a planAgg) string {
	switch a.Op {
	case "count":
		return TypeInteger
	case "avg":
		return TypeDouble
	case "sum":
		if a.Col.Type == TypeInteger {
			return TypeInteger
		}
		return a.Col.Type
	}
	return a.Col.Type
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
