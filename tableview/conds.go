package tableview

import (
	"fmt"
	"strings"

	"datadesk"
	"datadesk/engine/catalog"
)

// Op is an operator a column offers: its value in an address and its
// name in words.
type Op struct{ Value, Name string }

// Operators by column type; the first is the default.
var (
	numberOps = []Op{{"eq", "="}, {"between", "between"}, {"gt", ">"}, {"gte", "≥"}, {"lt", "<"}, {"lte", "≤"}, {"ne", "≠"},
		{"in", "one of"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	dateOps = []Op{{"eq", "on"}, {"between", "between"}, {"gt", "after"}, {"gte", "on or after"}, {"lt", "before"},
		{"lte", "on or before"}, {"ne", "not on"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	textOps = []Op{{"contains", "contains"}, {"eq", "equals"}, {"starts_with", "starts with"}, {"ends_with", "ends with"},
		{"ne", "is not"}, {"in", "one of"}, {"gt", "after (A–Z)"}, {"lt", "before (A–Z)"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	boolOps = []Op{{"eq", "is"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
)

// OpsFor are the operators a column of type typ offers, the default
// first.
func OpsFor(typ string) []Op {
	switch {
	case catalog.Numeric(typ):
		return numberOps
	case typ == "date" || typ == "timestamp":
		return dateOps
	case typ == "boolean":
		return boolOps
	}
	return textOps
}

// Known reports whether op is among ops.
func Known(ops []Op, op string) bool {
	for _, o := range ops {
		if o.Value == op {
			return true
		}
	}
	return false
}

func opValues(ops []Op) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Value
	}
	return out
}

// Blank reports whether op compares nothing (is blank, is not blank).
func Blank(op string) bool { return op == "is_blank" || op == "not_blank" }

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}

// readConds reads a column's conditions from its lists. A page's empty
// condition (nothing to compare) is one not filled in; the API refuses
// it, and an operator the column does not offer, and a bound given
// where between is not. A page keeps an operator its column does not
// offer, for the plan to refuse beside it.
func readConds(col catalog.Column, ops, vals, tos []string, mode Mode) ([]Cond, error) {
	offered := OpsFor(col.Type)
	var out []Cond
	for i := range max(len(ops), len(vals)) {
		c := Cond{Op: strings.TrimSpace(at(ops, i)), Value: strings.TrimSpace(at(vals, i)), To: strings.TrimSpace(at(tos, i))}
		if c.Op == "" || c.Op == "is_null" && c.Value == "" && mode == ForPage {
			c.Op = offered[0].Value
		}
		if mode == ForAPI && !Known(offered, c.Op) && c.Op != "is_null" {
			return nil, datadesk.Errorf(datadesk.Invalid, "o.%s is %q, which a %s column does not take", col.Key, c.Op, col.Type).
				WithField("o." + col.Key).WithAllowed(opValues(offered)...)
		}
		empty := c.Value == "" && (c.Op != "between" || c.To == "")
		switch {
		case Blank(c.Op):
			c.Value, c.To = "", ""
		case empty && mode == ForPage:
			continue
		case empty:
			return nil, datadesk.Errorf(datadesk.Invalid, "condition %d on %s (o.%s=%s) has no value: give f.%s", i+1, col.Key, col.Key, c.Op, col.Key).
				WithField("f." + col.Key)
		}
		if c.Op != "between" {
			if c.To != "" && mode == ForAPI {
				return nil, datadesk.Errorf(datadesk.Invalid, "t.%s is the upper bound of between; condition %d on %s is %s", col.Key, i+1, col.Key, c.Op).
					WithField("t." + col.Key)
			}
			c.To = ""
		}
		out = append(out, c)
	}
	if mode == ForAPI && len(tos) > len(out) {
		return nil, datadesk.Errorf(datadesk.Invalid, "t.%s is given %d times for %d conditions on %s", col.Key, len(tos), len(out), col.Key).WithField("t." + col.Key)
	}
	return out, nil
}

// Filters are the view's conditions as a plan takes them, in the table's
// column order, and for each the positions of its column and of the
// condition among the column's.
func (v *View) Filters() ([]catalog.Filter, [][2]int) {
	var fs []catalog.Filter
	var where [][2]int
	for i, conds := range v.Conds {
		for n, c := range conds {
			fs = append(fs, filterOf(v.Table.Columns[i], c))
			where = append(where, [2]int{i, n})
		}
	}
	return fs, where
}

// filterOf reads a condition as the plans take it: in takes a
// comma-separated list; between both bounds (one alone is at least or at
// most); the blank operators are is_blank's two values.
func filterOf(col catalog.Column, c Cond) catalog.Filter {
	f := catalog.Filter{Column: col.Key, Op: c.Op, Value: c.Value}
	switch c.Op {
	case "is_blank", "not_blank":
		f.Op, f.Value = "is_blank", c.Op == "is_blank"
	case "is_null":
		f.Value = c.Value != "false"
	case "between":
		switch {
		case c.Value != "" && c.To != "":
			f.Value = []any{c.Value, c.To}
		case c.Value != "":
			f.Op = "gte"
		default:
			f.Op, f.Value = "lte", c.To
		}
	case "in":
		var list []any
		for _, s := range strings.Split(c.Value, ",") {
			list = append(list, strings.TrimSpace(s))
		}
		f.Value = list
	}
	return f
}

// PageRequest is the view's page of rows, of size rows unless the view
// names its limit.
func (v *View) PageRequest(size int) catalog.PageRequest {
	fs, _ := v.Filters()
	if v.Limit > 0 {
		size = v.Limit
	}
	return catalog.PageRequest{Offset: v.Offset, Limit: size, Sort: v.Sort, Direction: v.Dir, Filters: fs, Search: v.Search, Columns: v.Columns}
}

// Query is the view as a files.query_table query of all its rows, in its
// order, of the columns it shows.
func (v *View) Query() catalog.Query {
	fs, _ := v.Filters()
	return catalog.Query{FileID: v.Table.ID, Filters: fs, Search: v.Search, SortBy: v.Sort, Direction: v.Dir, Columns: v.Columns}
}

// Param names the address's parameter an invalid argument of the view's
// plans is about (filters[2] is the third condition's value, f.<key>),
// or "" for none.
func (v *View) Param(field string) string {
	_, where := v.Filters()
	var i int
	if n, _ := fmt.Sscanf(field, "filters[%d]", &i); n == 1 && i < len(where) {
		prefix := "f."
		if strings.HasSuffix(field, ".op") {
			prefix = "o."
		}
		return prefix + v.Table.Columns[where[i][0]].Key
	}
	switch strings.SplitN(field, ".", 2)[0] {
	case "search":
		return "q"
	case "sort", "sort_by":
		return "sort"
	case "direction":
		return "dir"
	case "columns":
		return "col"
	}
	return ""
}

// Refused is err, when it is an invalid argument of one of the view's
// plans, said as the address's parameter: its field the parameter
// (f.amount for filters[2]) and its message beginning with it. Other
// errors are returned as they are.
func (v *View) Refused(err error) error {
	e := datadesk.AsError(err)
	if e.Code != datadesk.Invalid {
		return err
	}
	if p := v.Param(e.Field); p != "" {
		return &datadesk.Error{Code: e.Code, Message: p + ": " + e.Message, Field: p, Allowed: e.Allowed, Err: err}
	}
	return err
}
