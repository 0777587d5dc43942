package catalog

import (
	"fmt"
	"strings"

	"datadesk/engine/typing"
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
	// Notes say what the counts include that a reader may not expect: a
	// group of empty values among group_count.
	Notes []string `json:"notes,omitempty"`
	// EmptyGroups counts the groups where a group column is empty.
	EmptyGroups int64 `json:"-"`
	// First and Last are the group column's least and greatest value
	// in its order when the plan asked for its Bounds; nil for none.
	First, Last any `json:"-"`
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
	if c.Label != "" && typing.Key(c.Label) != c.Key {
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

// Finish completes an answer of total rows or groups: a page of rows or
// groups says whether more follow; a count or aggregate answer carries no
// rows and says nothing about more.
func (res *QueryResult) Finish(p *Plan, total int64) {
	for i, a := range p.Aggs {
		if _, ok := res.Aggregates[a.Name].(string); ok && numeric(p.OutType(len(p.Groups)+i)) {
			res.Notes = append(res.Notes, notFiniteNote(a.Name, 1))
		}
	}
	if p.Grouped() {
		res.Notes = append(res.Notes, notFiniteNotes(p.OutNames(), p.OutType, res.Rows)...)
	} else if p.Limit > 0 {
		res.Notes = append(res.Notes, notFiniteNotes(res.Columns, func(i int) string { return p.Cols[i].Type }, res.Rows)...)
	}
	if p.Grouped() && res.EmptyGroups > 0 {
		res.Notes = append(res.Notes, emptyGroupsNote(p.Groups, res.EmptyGroups))
	}
	if p.Grouped() || p.Limit > 0 {
		more := int64(p.Offset+len(res.Rows)) < total
		res.HasMore = &more
		return
	}
	res.Rows, res.Columns, res.Offset = nil, nil, 0
}

// NewSchemaPage is the page of t's columns that starts at offset, with
// the total and whether more follow when it does not hold them all.
func NewSchemaPage(t *Table, offset int) SchemaPage {
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

// emptyGroupsNote says how many of the groups are of empty values.
func emptyGroupsNote(groups []Column, n int64) string {
	if len(groups) == 1 {
		return fmt.Sprintf("group_count includes the group of empty %s values", groups[0].Key)
	}
	keys := make([]string, len(groups))
	for i, g := range groups {
		keys[i] = g.Key
	}
	return fmt.Sprintf("group_count includes %d %s with an empty %s", n, plural(n, "group", "groups"), strings.Join(keys, " or "))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Outcome is what the engine reads and sets of any answer as it finishes
// it: the statement that ran, the rows matched, and where a hint goes.
func (res *QueryResult) Outcome() (sql string, matched int64, hint *string) {
	return res.SQL, res.MatchedRowCount, &res.Hint
}

// AnalysisResult is files.analyze_table's answer: a page of groups (or
// the one row of an analysis without groups), each a row of the group
// values then the measures, with the counts it rests on.
type AnalysisResult struct {
	FileID          string   `json:"file_id"`
	TableID         string   `json:"table_id"`
	SourceRowCount  int64    `json:"source_row_count"`
	MatchedRowCount int64    `json:"matched_row_count"`
	GroupCount      *int64   `json:"group_count,omitempty"`
	Columns         []string `json:"columns"`
	Rows            [][]any  `json:"rows"`
	Offset          int      `json:"offset,omitempty"`
	HasMore         *bool    `json:"has_more,omitempty"`
	Notes           []string `json:"notes,omitempty"`
	// Hint says what to try when nothing matched and a near form exists.
	Hint string `json:"hint,omitempty"`
	View *View  `json:"view,omitempty"`
	// SQL is the statement that ran, for logs.
	SQL string `json:"-"`
	// EmptyGroups counts the groups where a group column is empty.
	EmptyGroups int64 `json:"-"`
	// Tied counts the groups past top's n-th tied with it: kept, or with
	// ties cut, left out.
	Tied int64 `json:"-"`
}

// Outcome is what the engine reads and sets of any answer as it finishes
// it: the statement that ran, the rows matched, and where a hint goes.
func (res *AnalysisResult) Outcome() (sql string, matched int64, hint *string) {
	return res.SQL, res.MatchedRowCount, &res.Hint
}

// Finish completes an answer of total groups.
func (res *AnalysisResult) Finish(p *AnalysisPlan) {
	res.Columns = p.OutNames()
	if res.Rows == nil {
		res.Rows = [][]any{}
	}
	res.Notes = append(res.Notes, notFiniteNotes(res.Columns, p.OutType, res.Rows)...)
	if !p.Grouped() {
		return
	}
	if n := windowsNote(p); n != "" {
		res.Notes = append(res.Notes, n)
	}
	if t := p.Top; t != nil && res.Tied > 0 {
		by := p.Measures[t.By].Name
		if t.Cut {
			res.Notes = append(res.Notes, fmt.Sprintf("top left out %d %s tied on %s with the last one kept (ties: cut); ties: keep keeps them",
				res.Tied, plural(res.Tied, "group", "groups"), by))
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("top kept %d more %s than n, tied on %s with the n-th (ties: keep); ties: cut keeps n exactly",
				res.Tied, plural(res.Tied, "group", "groups"), by))
		}
	}
	more := int64(p.Offset+len(res.Rows)) < *res.GroupCount
	res.HasMore = &more
	if res.EmptyGroups > 0 {
		cols := make([]Column, len(p.Groups))
		for i, g := range p.Groups {
			cols[i] = Column{Key: g.Name}
		}
		res.Notes = append(res.Notes, emptyGroupsNote(cols, res.EmptyGroups))
	}
}

// windowsNote says what the measures over the groups ran over, when
// filters could have changed it: the groups of the filtered rows, or
// every bucket with the filters on the series column choosing the
// buckets shown.
func windowsNote(p *AnalysisPlan) string {
	var names []string
	for _, m := range p.Measures {
		if m.Window() || m.OfTotal() {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 || p.Where == nil && !p.WindowsAll() {
		return ""
	}
	list := strings.Join(names, ", ")
	if p.WindowsAll() {
		g := p.Groups[p.Series]
		step, steps, start := seriesStep(g)
		return fmt.Sprintf("%s ran over every %s of %s the other filters kept (windows: all); the filters on %s then chose the %s shown%s",
			list, step, g.Col.Key, g.Col.Key, steps, start)
	}
	n := fmt.Sprintf("%s ran over the groups of the filtered rows only (windows: filtered)", list)
	if p.Series >= 0 && p.Where.filters(p.Groups[p.Series].Col.Key) {
		g := p.Groups[p.Series]
		step, _, _ := seriesStep(g)
		n += fmt.Sprintf("; a running total or share starts at the first %s the filters on %s keep: windows: all carries the earlier ones in",
			step, g.Col.Key)
	}
	return n
}

// seriesStep names a series' steps in a note: its bucket (month,
// months, each chosen by its start) or, for a whole-number column, its
// values.
func seriesStep(g GroupTerm) (step, steps, start string) {
	if g.Bucket == "" {
		return "value", "values", ""
	}
	return g.Bucket, g.Bucket + "s", ", each by its start"
}

// filters reports whether a top-level condition of b is on column key.
func (b *Bool) filters(key string) bool {
	if b == nil {
		return false
	}
	for _, c := range b.Conds {
		if c.Col.Key == key {
			return true
		}
	}
	return false
}
