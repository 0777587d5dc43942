package catalog

import (
	"slices"
	"strings"

	"datadesk/engine/typing"
)

// The ops of files.analyze_table, each defined once here: the checker
// reads from this table what an op needs, the type of its values and its
// default name; the tool's schema takes its lists and its description of
// each op from it (toolcall); each dialect keeps its SQL in a map keyed
// by op; and the dialects', the oracle's and the schema's tests run every
// op it names. A new op is a row here and an entry in each dialect's map;
// TestOpTableComplete fails where one is missing.

// ColumnNeed is what a measure asks of its column.
type ColumnNeed int

const (
	// NoColumn: the measure takes no column (it reads other measures).
	NoColumn ColumnNeed = iota
	// MaybeColumn: rows without a column, non-empty values with one.
	MaybeColumn
	// MaybeNumber: rows without a column, a numeric column's sum with one.
	MaybeNumber
	// AnyColumn: a column of any type.
	AnyColumn
	// NumberColumn: an integer, decimal or double column.
	NumberColumn
	// OrderedColumn: a number, date, timestamp, time or text column.
	OrderedColumn
)

// needs says in words what each need accepts, for errors.
var needs = map[ColumnNeed]string{
	AnyColumn:     "a column",
	NumberColumn:  "a numeric column",
	OrderedColumn: "a number, date, timestamp or text column",
}

// accepts reports whether a column of type typ meets the need.
func (n ColumnNeed) accepts(typ string) bool {
	switch n {
	case NumberColumn, MaybeNumber:
		return Numeric(typ)
	case OrderedColumn:
		return typ != typing.TypeBoolean
	}
	return true
}

// Gives is the type of a measure's values.
type Gives int

const (
	// givesUnset is no type: TestOpTableComplete refuses a row without one.
	givesUnset Gives = iota
	// GivesInteger: whole numbers (a count, a rank).
	GivesInteger
	// GivesDouble: numbers with a fraction (a mean, a share).
	GivesDouble
	// GivesColumnType: values of its column's type (a value the column
	// holds, or a sum of them).
	GivesColumnType
	// GivesOfType: the type of the measure it follows when that is whole
	// or decimal, else double (a change, a running total).
	GivesOfType
)

// MeasureOp is one op of a measure.
type MeasureOp struct {
	Name   string
	Column ColumnNeed
	// Takes are the measure's arguments beyond op, column and name that
	// apply to this op: p, order_by, of, within, direction.
	Takes []string
	// OverGroups: computed over the groups' own measures (a window),
	// after grouping.
	OverGroups bool
	// OfTotal: a part of the total of every group's value, so that, as
	// OverGroups' measures do, it runs over the groups (windows).
	OfTotal bool
	// Gives is the type of its values.
	Gives Gives
	// Named is its default name: {_column} stands for "_" and its
	// column's key ("" without a column), {of} for the measure it
	// follows, {p} for p in percent ("p90_amount").
	Named string
	// Doc says what the op gives, in a few words, for the tool's
	// description after the op's name.
	Doc string
}

// MeasureTable is every op of a measure, in the order the schema lists
// them; "expr" (a measure computed from others by name) is not an op
// but the measure's expr argument.
var MeasureTable = []MeasureOp{
	{Name: "count", Column: MaybeColumn, Gives: GivesInteger, Named: "count{_column}", Doc: "rows, or a column's values"},
	{Name: "count_distinct", Column: AnyColumn, Gives: GivesInteger, Named: "distinct{_column}", Doc: "distinct values"},
	{Name: "sum", Column: NumberColumn, Gives: GivesColumnType, Named: "sum{_column}", Doc: "total"},
	{Name: "avg", Column: NumberColumn, Gives: GivesDouble, Named: "avg{_column}", Doc: "mean"},
	{Name: "min", Column: OrderedColumn, Gives: GivesColumnType, Named: "min{_column}", Doc: "least value"},
	{Name: "max", Column: OrderedColumn, Gives: GivesColumnType, Named: "max{_column}", Doc: "greatest value"},
	{Name: "first", Column: AnyColumn, Takes: []string{"order_by"}, Gives: GivesColumnType, Named: "first{_column}",
		Doc: "at the earliest order_by"},
	{Name: "last", Column: AnyColumn, Takes: []string{"order_by"}, Gives: GivesColumnType, Named: "last{_column}",
		Doc: "at the latest order_by; not max, for totals to date"},
	{Name: "median", Column: NumberColumn, Gives: GivesDouble, Named: "median{_column}", Doc: "middle value"},
	{Name: "percentile", Column: NumberColumn, Takes: []string{"p"}, Gives: GivesDouble, Named: "p{p}{_column}", Doc: "p 0-1"},
	{Name: "stddev", Column: NumberColumn, Gives: GivesDouble, Named: "stddev{_column}", Doc: "sample"},
	{Name: "mode", Column: AnyColumn, Gives: GivesColumnType, Named: "mode{_column}", Doc: "most frequent, least of ties"},
	{Name: "share", Column: MaybeNumber, OfTotal: true, Gives: GivesDouble, Named: "share{_column}", Doc: "of the total"},
	{Name: "change", Column: NoColumn, Takes: []string{"of", "within"}, OverGroups: true, Gives: GivesOfType, Named: "change_{of}",
		Doc: "from the previous group"},
	{Name: "pct_change", Column: NoColumn, Takes: []string{"of", "within"}, OverGroups: true, Gives: GivesDouble, Named: "pct_change_{of}",
		Doc: "0.25 is +25%"},
	{Name: "running_total", Column: NoColumn, Takes: []string{"of", "within"}, OverGroups: true, Gives: GivesOfType, Named: "running_{of}",
		Doc: "sum so far"},
	{Name: "rank", Column: NoColumn, Takes: []string{"of", "within", "direction"}, OverGroups: true, Gives: GivesInteger, Named: "rank_{of}",
		Doc: "1 highest unless direction asc, ties sharing, per groups in within"},
}

// valueType is the catalog type of the values of op (an op of
// MeasureTable, or expr, whose values are doubles) over column col (nil
// for none); of is the type of the measure it follows.
func valueType(op string, col *Column, of func() string) string {
	row, _ := measureOp(op)
	switch row.Gives {
	case GivesInteger:
		return typing.TypeInteger
	case GivesColumnType:
		return col.Type
	case GivesOfType:
		if t := of(); t == typing.TypeInteger || t == typing.TypeDecimal {
			return t
		}
	}
	return typing.TypeDouble
}

// MeasureDocs describe the measures of a group's rows, each op by its
// name and Doc, for the tool's description: "count (rows, or a column's
// values), count_distinct (distinct values), ...".
var MeasureDocs = describeOps(func(o MeasureOp) bool { return !o.OverGroups })

// OverGroupsDocs describe the measures over the groups, likewise.
var OverGroupsDocs = describeOps(func(o MeasureOp) bool { return o.OverGroups })

func describeOps(keep func(MeasureOp) bool) string {
	var out []string
	for _, o := range MeasureTable {
		if keep(o) {
			out = append(out, o.Name+" ("+o.Doc+")")
		}
	}
	return strings.Join(out, ", ")
}

// MeasureOps are the names of MeasureTable's ops.
var MeasureOps = opNames(MeasureTable, func(o MeasureOp) string { return o.Name })

// measureOp returns op's row of MeasureTable.
func measureOp(op string) (MeasureOp, bool) {
	i := slices.IndexFunc(MeasureTable, func(o MeasureOp) bool { return o.Name == op })
	if i < 0 {
		return MeasureOp{}, false
	}
	return MeasureTable[i], true
}

// takenBy lists the ops that take argument arg, in words: "change,
// pct_change, running_total and rank".
func takenBy(arg string) string {
	return opsWhere(func(o MeasureOp) bool { return slices.Contains(o.Takes, arg) })
}

// opsWhere lists the ops of MeasureTable that keep holds for, in words.
func opsWhere(keep func(MeasureOp) bool) string {
	var ops []string
	for _, o := range MeasureTable {
		if keep(o) {
			ops = append(ops, o.Name)
		}
	}
	if len(ops) < 2 {
		return strings.Join(ops, "")
	}
	return strings.Join(ops[:len(ops)-1], ", ") + " and " + ops[len(ops)-1]
}

// FilterOp is one op of a filter.
type FilterOp struct {
	Name string
	// Value is what the op's value is: "value" (one, of the column's
	// type), "pair" ([low, high]), "list" (up to 100 values), "text" or
	// "bool" (true or false).
	Value string
	Doc   string
}

// FilterTable is every op of files.analyze_table's filters.
var FilterTable = []FilterOp{
	{Name: "eq", Value: "value", Doc: "equals (text ignoring case)"},
	{Name: "ne", Value: "value", Doc: "differs from, empty cells included"},
	{Name: "contains", Value: "text", Doc: "contains the text, ignoring case"},
	{Name: "starts_with", Value: "text", Doc: "starts with the text, ignoring case"},
	{Name: "ends_with", Value: "text", Doc: "ends with the text, ignoring case"},
	{Name: "gt", Value: "value", Doc: "greater than"},
	{Name: "gte", Value: "value", Doc: "greater than or equal to"},
	{Name: "lt", Value: "value", Doc: "less than"},
	{Name: "lte", Value: "value", Doc: "less than or equal to"},
	{Name: "between", Value: "pair", Doc: "from low to high, both included"},
	{Name: "in", Value: "list", Doc: "equals one of the values"},
	{Name: "not_in", Value: "list", Doc: "equals none of the values, empty cells included"},
	{Name: "is_null", Value: "bool", Doc: "true: empty cells; false: the others"},
	{Name: "is_blank", Value: "bool", Doc: "true: empty or only spaces; false: the others"},
}

// HavingOps are the filter ops a having condition takes: comparisons of a
// group's measure.
var HavingOps = []string{"eq", "ne", "gt", "gte", "lt", "lte", "between", "is_null"}

// The ops of files.query_table, whose schema is the one the tool was
// specified with: its aggregates and its filters, which the analysis's
// filters extend.
var (
	QueryAggregateOps = []string{"count", "sum", "avg", "min", "max"}
	QueryFilterOps    = []string{"eq", "ne", "contains", "gt", "gte", "lt", "lte", "in", "is_null"}
)

// TiesOptions are top.ties's values: keep (the default) or cut.
var TiesOptions = []string{"keep", "cut"}

// WindowsOptions are the values of windows: filtered (the default) or all.
var WindowsOptions = []string{WindowsFiltered, WindowsAll}

// FilterOps are the names of FilterTable's ops.
var FilterOps = opNames(FilterTable, func(o FilterOp) string { return o.Name })

func opNames[T any](table []T, name func(T) string) []string {
	out := make([]string, len(table))
	for i, o := range table {
		out[i] = name(o)
	}
	return out
}
