package catalog

import (
	"bytes"
	"encoding/json"

	"datadesk"
)

// Limits of files.analyze_table, as its schema states them.
const (
	MaxAnalysisGroups   = 4
	MaxMeasures         = 16
	MaxAnalysisConds    = 50
	MaxHaving           = 10
	MaxAnalysisPage     = 50
	DefaultAnalysisPage = 20
	MaxTopN             = 100
	MaxJoinKeys         = 3
)

// MaxCompiledSQL bounds the statement an analysis compiles to. Each
// computed measure is a stage of its own, naming earlier measures as
// columns, so a statement grows with the arguments, never with how often
// measures name each other: the limits above allow about 23 KB. The bound
// keeps it so whatever the compilers become.
const MaxCompiledSQL = 256 << 10

// CheckCompiled refuses a compiled statement past MaxCompiledSQL.
// Errors: invalid.
func CheckCompiled(q string) error {
	if len(q) > MaxCompiledSQL {
		return datadesk.Errorf(datadesk.Invalid, "these measures and filters compile to a statement of %d bytes, more than the %d allowed: "+
			"use fewer or shorter computed measures", len(q), MaxCompiledSQL).WithField("measures")
	}
	return nil
}

// Buckets are the time buckets a date or timestamp column groups by.
var Buckets = []string{"year", "quarter", "month", "week", "day", "hour"}

// Analysis is a files.analyze_table call's arguments, already checked
// against the tool's schema. Values are nil, bool, json.Number, string or
// []any of those.
type Analysis struct {
	FileID    string       `json:"file_id"`
	Filters   []FilterNode `json:"filters,omitempty"`
	GroupBy   []GroupBy    `json:"group_by,omitempty"`
	Measures  []Measure    `json:"measures,omitempty"`
	Having    []Having     `json:"having,omitempty"`
	Top       *Top         `json:"top,omitempty"`
	Lookup    *Lookup      `json:"lookup,omitempty"`
	SortBy    string       `json:"sort_by,omitempty"`
	Direction string       `json:"direction,omitempty"`
	Limit     int          `json:"limit,omitempty"`
	Offset    int          `json:"offset,omitempty"`
	Show      bool         `json:"show,omitempty"`
	// Windows is what the measures over the groups run over: "filtered"
	// (the default), the groups of the filtered rows; or "all", every
	// bucket of the series, with the filters on the series column kept
	// for the buckets shown.
	Windows string `json:"windows,omitempty"`
}

// Window scopes: what change, pct_change, running_total, rank and share
// run over.
const (
	WindowsFiltered = "filtered"
	WindowsAll      = "all"
)

// FilterNode is a condition on a column (Column, Op, Value), or a group of
// nodes of which any (OR) or all (AND) must hold.
type FilterNode struct {
	Column string       `json:"column,omitempty"`
	Op     string       `json:"op,omitempty"`
	Value  any          `json:"value,omitempty"`
	Any    []FilterNode `json:"any,omitempty"`
	All    []FilterNode `json:"all,omitempty"`
}

// UnmarshalJSON reads a filter, refusing keys a filter does not have:
// the tool's schema checks the filters' first level, and a key misspelt
// deeper would otherwise be dropped unseen.
func (n *FilterNode) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err == nil {
		for k := range keys {
			switch k {
			case "column", "op", "value", "any", "all":
			default:
				return qerr("filters", "unknown key %q in a filter; a filter has column, op and value, or any or all", k).
					WithAllowed("column", "op", "value", "any", "all")
			}
		}
	}
	type plain FilterNode
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode((*plain)(n))
}

// GroupBy is a group column, with a time bucket for a date or timestamp
// column. It is written as the column's key alone, or as an object.
type GroupBy struct {
	Column string `json:"column"`
	Bucket string `json:"bucket,omitempty"`
}

// UnmarshalJSON reads "key" or {"column": "key", "bucket": "month"}.
func (g *GroupBy) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &g.Column)
	}
	type plain GroupBy
	return json.Unmarshal(b, (*plain)(g))
}

// MarshalJSON writes a group without a bucket as its key.
func (g GroupBy) MarshalJSON() ([]byte, error) {
	if g.Bucket == "" {
		return json.Marshal(g.Column)
	}
	type plain GroupBy
	return json.Marshal(plain(g))
}

// Measure is one value of each group (or of all matched rows): an
// aggregate of a column (Op, Column, P for a percentile), a computation
// over other measures (Expr), or a measure over the groups (Op change,
// pct_change, running_total or rank, Of another measure).
type Measure struct {
	Op        string   `json:"op,omitempty"`
	Column    string   `json:"column,omitempty"`
	Name      string   `json:"name,omitempty"`
	P         *float64 `json:"p,omitempty"`
	Expr      string   `json:"expr,omitempty"`
	Of        string   `json:"of,omitempty"`
	Within    []string `json:"within,omitempty"`
	Direction string   `json:"direction,omitempty"`
	// OrderBy is the column first and last follow.
	OrderBy string `json:"order_by,omitempty"`
}

// Having is a condition on a measure, applied to the groups.
type Having struct {
	Measure string `json:"measure"`
	Op      string `json:"op"`
	Value   any    `json:"value"`
}

// Top keeps the first N groups of each combination of the Per groups, by
// measure By.
type Top struct {
	N         int      `json:"n"`
	Per       []string `json:"per"`
	By        string   `json:"by,omitempty"`
	Direction string   `json:"direction,omitempty"`
	// Ties is "keep" (the default: every group tied with the n-th is
	// kept) or "cut" (n groups exactly, ties broken by the group values).
	Ties string `json:"ties,omitempty"`
}

// Lookup joins a second table of the same owner, many to one: each row
// takes the values of the lookup row whose key columns equal its own.
type Lookup struct {
	FileID string       `json:"file_id"`
	On     []LookupJoin `json:"on"`
}

// LookupJoin pairs a column of the table with one of the lookup table.
type LookupJoin struct {
	Column       string `json:"column"`
	LookupColumn string `json:"lookup_column"`
}

// LookupPrefix names the lookup table's columns in an analysis:
// "lookup.continent".
const LookupPrefix = "lookup."
