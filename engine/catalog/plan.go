package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"datadesk"
	"datadesk/engine/typing"
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
	DefaultGroupPage = 20
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

// Plan is a checked query in typed parts: every name resolved to a column
// of the table, every value converted to its column's type. It holds no
// SQL; each backend compiles it in its own dialect (ducksql.Query, the
// ClickHouse backend's chSelect).
type Plan struct {
	Table *Table
	Query Query
	// Outputs are a grouped result's columns, the group columns then the
	// aggregates, or an ungrouped one's aggregates.
	Outputs
	// Conds are the filters, AND-ed; Search, if set, keeps rows where any
	// of its columns contains its text.
	Conds  []Cond
	Search *Search
	// Groups and Aggs make a grouped result (Groups set) or the aggregates
	// of all matched rows.
	Groups []Column
	Aggs   []Agg
	// Cols are the columns of an ungrouped result's rows.
	Cols []Column
	// Sort orders the result: an output column of a grouped one, a column
	// of an ungrouped one; ties break on the group columns or file order.
	Sort *Sort
	// Limit is the page's size (0: no rows of an ungrouped result);
	// Offset where it starts.
	Limit  int
	Offset int
	// Bounds asks a grouped plan of one group column for that column's
	// first and last value, in its order, among the matched rows
	// (QueryResult.First and Last), found from the groups the answer
	// makes anyway: a column's summary reads its rows once. Set by the
	// engine's callers, never by a tool's arguments; read from a page
	// that starts at the first group.
	Bounds bool
}

// Cond is one checked filter on a column.
type Cond struct {
	Col Column
	// Op is eq, ne, gt, gte, lt, lte, in, contains or is_null.
	Op string
	// Values are the operand, converted as CondValue says: one for a
	// comparison, one or more for in.
	Values []any
	// Text is what contains looks for, as given.
	Text string
	// Null is is_null's operand: true keeps empty cells, false the others.
	Null bool
	// AsNumber compares a text column as numbers: a comparison with a
	// number reads the column's values that are numbers (NumberPattern)
	// as numbers, and its others match none; with is_null they count as
	// empty. Values are then float64s.
	AsNumber bool
	// Field is the argument the condition came from (filters[0]), for
	// what is said of it after the checks.
	Field string
}

// NumberPattern is the form of a text value a comparison with a number
// reads as a number, anchored at both ends by the dialects: digits, with
// a minus and a fraction, as programs write numbers and as the import
// counts them ("12", "-3.5", "007"); other forms ("1,234", "$5", "+3",
// ".5", "1e5") are not numbers here.
const NumberPattern = `-?[0-9]+([.][0-9]+)?`

// Search keeps rows where any of Cols contains Text, ignoring case.
type Search struct {
	Text string
	Cols []Column
}

// Agg is a checked aggregate: count of rows (Col nil) or of a column's
// values, or sum, avg, min or max of a numeric column.
type Agg struct {
	Name string
	Op   string
	Col  *Column
}

// Sort is a result's first order: output column Out of a grouped result,
// or column Col of an ungrouped one.
type Sort struct {
	Out  int
	Col  *Column
	Desc bool
}

// Grouped reports whether the result has one row per group.
func (p *Plan) Grouped() bool { return len(p.Groups) > 0 }

// GroupBounds reports whether the answer carries its group column's
// first and last value: Bounds asked, of one group column.
func (p *Plan) GroupBounds() bool { return p.Bounds && len(p.Groups) == 1 }

// Derived reports whether the query's result differs from the table: it
// filters or groups. Showing a derived result makes a new table.
func (p *Plan) Derived() bool { return len(p.Conds) > 0 || p.Search != nil || p.Grouped() }

// Filtered reports whether the plan keeps only some rows.
func (p *Plan) Filtered() bool { return len(p.Conds) > 0 || p.Search != nil }

func qerr(field, format string, args ...any) *datadesk.Error {
	return datadesk.Errorf(datadesk.Invalid, format, args...).WithField(field)
}

// PlanFor checks q against table t. Errors: invalid, naming the argument.
func PlanFor(t *Table, q Query) (*Plan, error) {
	p := &Plan{Table: t, Query: q, Limit: q.Limit, Offset: q.Offset}
	if q.Limit < 0 || q.Limit > MaxQueryRows {
		return nil, qerr("limit", "limit must be from 0 to %d", MaxQueryRows)
	}
	if q.Offset < 0 || q.Offset > MaxQueryOffset {
		return nil, qerr("offset", "offset must be from 0 to %d", MaxQueryOffset)
	}
	if q.SchemaOffset < 0 || q.SchemaOffset > 255 {
		return nil, qerr("schema_offset", "schema_offset must be from 0 to 255")
	}
	var err error
	if p.Conds, p.Search, err = CheckFilters(t, q.Filters, q.Search); err != nil {
		return nil, err
	}
	if err := p.checkGroups(); err != nil {
		return nil, err
	}
	if len(q.Columns) > 0 && p.Grouped() {
		return nil, qerr("columns", "columns picks the columns of rows; with group_by the result is the group columns and aggregates")
	}
	for i, k := range q.Columns {
		c, err := t.resolve(fmt.Sprintf("columns[%d]", i), k)
		if err != nil {
			return nil, err
		}
		p.Cols = append(p.Cols, *c)
	}
	if len(p.Cols) == 0 && !p.Grouped() {
		p.Cols = t.Columns
	}
	if err := p.checkSort(); err != nil {
		return nil, err
	}
	if p.Grouped() && p.Limit == 0 {
		p.Limit = DefaultGroupPage
	}
	return p, nil
}

// resolve finds column key of t; field names the argument for the error.
func (t *Table) resolve(field, key string) (*Column, error) {
	for i := range t.Columns {
		if t.Columns[i].Key == key {
			return &t.Columns[i], nil
		}
	}
	return nil, qerr(field, "unknown column %q; valid keys: %s", key, strings.Join(t.Keys(), ", ")).WithAllowed(t.Keys()...)
}

// checkGroups resolves the group columns and the aggregates, with a
// count when grouped without any, and gives each aggregate its name.
func (p *Plan) checkGroups() error {
	q, t := p.Query, p.Table
	if len(q.GroupBy) > MaxGroupBy {
		return qerr("group_by", "at most %d group_by columns are allowed", MaxGroupBy)
	}
	outNames := map[string]string{} // output name -> field that named it
	for i, g := range q.GroupBy {
		field := fmt.Sprintf("group_by[%d]", i)
		c, err := t.resolve(field, g)
		if err != nil {
			return err
		}
		if _, dup := outNames[strings.ToLower(c.Key)]; dup {
			return qerr(field, "column %q is grouped twice", g)
		}
		outNames[strings.ToLower(c.Key)] = field
		p.Groups = append(p.Groups, *c)
		p.addOut(c.Key, c.Type, "")
	}
	if len(q.Aggregates) > MaxAggregates {
		return qerr("aggregates", "at most %d aggregates are allowed", MaxAggregates)
	}
	aggs := q.Aggregates
	if p.Grouped() && len(aggs) == 0 {
		aggs = []Aggregate{{Op: "count"}}
	}
	for i, a := range aggs {
		field := fmt.Sprintf("aggregates[%d]", i)
		pa := Agg{Op: a.Op, Name: a.Name}
		if a.Column != "" {
			c, err := t.resolve(field+".column", a.Column)
			if err != nil {
				return err
			}
			pa.Col = c
		}
		switch a.Op {
		case "count":
		case "sum", "avg", "min", "max":
			if pa.Col == nil {
				return qerr(field+".column", "%s needs a column", a.Op)
			}
			if !Numeric(pa.Col.Type) {
				return qerr(field+".column", "%s needs a numeric column; %q is %s (files.analyze_table takes min and max of dates and text)%s",
					a.Op, pa.Col.Key, pa.Col.typeSaid(), pa.Col.numbersAdvice()).
					WithAllowed(numericKeys(t)...)
			}
		default:
			return qerr(field+".op", "unknown aggregate %q; files.analyze_table also counts distinct values (count_distinct) and takes "+
				"median, percentile, stddev and share", a.Op).WithAllowed(QueryAggregateOps...)
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
			return qerr(field+".name", "name %q is already used by %s; give each aggregate a unique name", pa.Name, prev)
		}
		outNames[strings.ToLower(pa.Name)] = field
		p.Aggs = append(p.Aggs, pa)
		p.addOut(pa.Name, valueType(pa.Op, pa.Col, nil), pa.Op)
	}
	return nil
}

// checkSort resolves sort_by and direction: an output column of a grouped
// result, a column of an ungrouped one.
func (p *Plan) checkSort() error {
	q := p.Query
	desc := false
	switch q.Direction {
	case "", "asc":
	case "desc":
		desc = true
	default:
		return qerr("direction", "direction must be asc or desc").WithAllowed("asc", "desc")
	}
	if q.SortBy == "" {
		return nil
	}
	if !p.Grouped() {
		c, err := p.Table.resolve("sort_by", q.SortBy)
		if err != nil {
			return err
		}
		p.Sort = &Sort{Out: -1, Col: c, Desc: desc}
		return nil
	}
	names := p.OutNames()
	for i, n := range names {
		if n == q.SortBy {
			p.Sort = &Sort{Out: i, Desc: desc}
			return nil
		}
	}
	return qerr("sort_by", "sort_by %q is neither a group_by column nor an aggregate name", q.SortBy).WithAllowed(names...)
}

// CheckFilters checks filters and a search against t and returns them as
// conditions. Errors: invalid, naming the filter.
func CheckFilters(t *Table, filters []Filter, search string) ([]Cond, *Search, error) {
	if len(filters) > MaxFilters {
		return nil, nil, qerr("filters", "at most %d filters are allowed", MaxFilters)
	}
	var conds []Cond
	for i, f := range filters {
		field := fmt.Sprintf("filters[%d]", i)
		c, err := t.resolve(field+".column", f.Column)
		if err != nil {
			return nil, nil, err
		}
		cond, err := checkFilter(field, c, f)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, cond)
	}
	if search == "" {
		return conds, nil, nil
	}
	if len([]rune(search)) > MaxSearchChars {
		return nil, nil, datadesk.Errorf(datadesk.Invalid, "search takes at most %d characters", MaxSearchChars).WithField("search")
	}
	s := &Search{Text: search}
	for _, c := range t.Columns {
		if c.Type == typing.TypeText {
			s.Cols = append(s.Cols, c)
		}
	}
	if len(s.Cols) == 0 {
		return nil, nil, datadesk.Errorf(datadesk.Invalid, "the table has no text columns to search; use a filter").WithField("search")
	}
	return conds, s, nil
}

// MaxSearchChars bounds the text a search looks for.
const MaxSearchChars = 200

// checkFilter checks one filter on column c. Text is compared
// case-insensitively; numbers as numbers; dates as dates.
func checkFilter(field string, c *Column, f Filter) (Cond, error) {
	cond := Cond{Col: *c, Op: f.Op, Field: field}
	vfield := field + ".value"
	switch f.Op {
	case "starts_with", "ends_with", "between", "is_blank":
		// The analysis's ops, which the page's filters take too; the
		// query_table tool's schema keeps them to files.analyze_table.
		return checkAnalysisFilter(field, c, FilterNode{Column: f.Column, Op: f.Op, Value: f.Value})
	case "is_null":
		b, ok := f.Value.(bool)
		if !ok {
			return cond, qerr(vfield, "is_null takes true or false")
		}
		cond.Null = b
		return cond, nil
	case "in":
		list, ok := f.Value.([]any)
		if !ok {
			return cond, qerr(vfield, "in takes an array of up to %d values", MaxInValues)
		}
		if len(list) == 0 || len(list) > MaxInValues {
			return cond, qerr(vfield, "in takes 1 to %d values, not %d", MaxInValues, len(list))
		}
		var err error
		cond.Values, err = condValues(vfield, c, list)
		return cond, err
	}
	if _, isList := f.Value.([]any); isList {
		return cond, qerr(vfield, "%s takes one value; only in takes an array", f.Op)
	}
	if f.Value == nil {
		return cond, qerr(vfield, "value is null; to match empty cells use op is_null with true")
	}
	switch f.Op {
	case "contains":
		cond.Text = ValueText(f.Value)
		return cond, nil
	case "eq", "ne", "gt", "gte", "lt", "lte":
		if c.Type == typing.TypeBoolean && f.Op != "eq" && f.Op != "ne" {
			return cond, qerr(field+".op", "%s does not apply to boolean column %q; use eq or ne", f.Op, c.Key)
		}
		if x, ok := numberValue(f.Value); ok && c.Type == typing.TypeText && f.Op != "eq" && f.Op != "ne" {
			cond.AsNumber, cond.Values = true, []any{x}
			return cond, nil
		}
		pv, err := CondValue(vfield, c, f.Value)
		if err != nil {
			return cond, err
		}
		cond.Values = []any{pv}
		return cond, nil
	}
	return cond, qerr(field+".op", "unknown op %q; files.analyze_table's filters also take not_in, starts_with, ends_with, between, "+
		"is_blank and OR groups (any)", f.Op).WithAllowed("eq", "ne", "contains", "gt", "gte", "lt", "lte", "in", "is_null")
}

// condValues converts each value of a list to column c's type, naming a
// wrong one by its place in field.
func condValues(field string, c *Column, list []any) ([]any, error) {
	out := make([]any, 0, len(list))
	for i, v := range list {
		pv, err := CondValue(fmt.Sprintf("%s[%d]", field, i), c, v)
		if err != nil {
			return nil, err
		}
		out = append(out, pv)
	}
	return out, nil
}

// Numeric reports whether a column type holds numbers.
func Numeric(typ string) bool {
	return typ == typing.TypeInteger || typ == typing.TypeDecimal || typ == typing.TypeDouble
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

// ValueText is a filter value as text: strings as they are, numbers as
// written in the call, booleans as true or false.
func ValueText(v any) string {
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

// CondValue reads a filter value as column c's type: a float64 for
// numbers, a YYYY-MM-DD string for dates, a timestamp in UTC written
// YYYY-MM-DD HH:MM:SS[.fraction] for timestamps, a bool for booleans, and
// text for text. Identifiers are text: a JSON number 123 is the text
// "123", never 0123.
func CondValue(field string, c *Column, v any) (any, error) {
	bad := func() error {
		return qerr(field, "value %s cannot be read as %s for column %q", jsonText(v), c.Type, c.Key)
	}
	if v == nil {
		return nil, qerr(field, "value is null; to match empty cells use op is_null")
	}
	switch c.Type {
	case typing.TypeInteger, typing.TypeDecimal, typing.TypeDouble:
		s, ok := numberText(v)
		if !ok {
			return nil, bad()
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, bad()
		}
		return f, nil
	case typing.TypeDate:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return nil, qerr(field, "value %q cannot be read as a date for column %q; use YYYY-MM-DD", s, c.Key)
		}
		return s, nil
	case typing.TypeTimestamp:
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
	case typing.TypeTime:
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		for _, l := range []string{"15:04", "15:04:05"} {
			if d, err := time.Parse(l, s); err == nil {
				return d.Format(TimeLayout), nil
			}
		}
		return nil, qerr(field, "value %q cannot be read as a time of day for column %q; use HH:MM or HH:MM:SS", s, c.Key)
	case typing.TypeBoolean:
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
	return ValueText(v), nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
