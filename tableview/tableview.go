// Package tableview is a table view's address: the query parameters a
// table page and the rows API share (conditions, search, sort, columns,
// summaries, grouping, paging), read and checked against the table into a
// View, and written back holding only what is set. The page and the API
// read the same address the same way, so that every page has a JSON twin
// with the same parameters and the same rows.
//
// A column's conditions are its lists o.<key> (operators), f.<key>
// (values) and t.<key> (between's upper bound), read in step: the n-th
// of each is its n-th condition. An empty operator is the column's first.
package tableview

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine/catalog"
)

// Mode is whose address is read.
type Mode int

const (
	// ForAPI reads the rows API's address: every parameter must be one it
	// takes, every condition complete.
	ForAPI Mode = iota
	// ForPage reads a table page's address, which its form writes: an
	// empty field is one not filled in, and msg carries a message.
	ForPage
)

// Cond is one condition as an address has it.
type Cond struct {
	Op, Value, To string
}

// Group is a grouping as an address asks for it: g (the column), gb (a
// date's bucket), gm (the measure) and gc (the measured column).
type Group struct {
	Column, Bucket, Op, Of string
}

// View is a table view as its address states it.
type View struct {
	Table *catalog.Table
	// Conds are each column's conditions, by the column's position.
	Conds  [][]Cond
	Search string
	// Sort is a column key, Dir asc or desc (or empty: ascending).
	Sort, Dir string
	// Columns are the keys of the columns shown, in their order; nil
	// shows every column in the table's order.
	Columns []string
	// Summaries are the keys of the columns summarised, in order.
	Summaries []string
	Group     Group
	Offset    int64
	// Limit is the rows API's page size; 0 is the default.
	Limit int
	// Message is a page's message (msg).
	Message string
}

// once are the parameters an address takes at most once.
var once = []string{"q", "sort", "dir", "direction", "offset", "limit", "g", "gb", "gm", "gc", "msg"}

// Params names the parameters an address of t may take in mode, for an
// error that lists them.
func Params(t *catalog.Table, mode Mode) []string {
	out := []string{"q", "sort", "dir", "offset", "col", "hide", "summary", "g", "gb", "gm", "gc"}
	if mode == ForAPI {
		out = append(out, "limit")
	} else {
		out = append(out, "msg")
	}
	for _, k := range t.Keys() {
		out = append(out, "o."+k, "f."+k, "t."+k)
	}
	return out
}

// Parse reads the address q of a view of t. Errors: invalid, naming the
// parameter: one the address does not take, one given twice that is
// taken once, a number or direction that is not one, and, for the API, a
// condition without its value or with a bound it does not take.
func Parse(t *catalog.Table, q url.Values, mode Mode) (*View, error) {
	v := &View{Table: t, Conds: make([][]Cond, len(t.Columns))}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := v.take(k, q[k], mode); err != nil {
			return nil, err
		}
	}
	for i, col := range t.Columns {
		conds, err := readConds(col, q["o."+col.Key], q["f."+col.Key], q["t."+col.Key], mode)
		if err != nil {
			return nil, err
		}
		v.Conds[i] = conds
	}
	if err := v.chooseColumns(q["col"], q["hide"]); err != nil {
		return nil, err
	}
	return v, nil
}

// take reads parameter k's values vals into v, all but the conditions and
// the columns, which Parse reads by column.
func (v *View) take(k string, vals []string, mode Mode) error {
	if slices.Contains(once, k) && len(vals) > 1 {
		return datadesk.Errorf(datadesk.Invalid, "%s is given %d times; it is taken once", k, len(vals)).WithField(k)
	}
	one := strings.TrimSpace(vals[0])
	switch k {
	case "q":
		v.Search = one
	case "sort":
		v.Sort = one
		if c, ok := v.Table.Lookup(one); ok {
			v.Sort = c.Key
		}
	case "dir", "direction":
		if v.Dir != "" && v.Dir != strings.ToLower(one) {
			return datadesk.Errorf(datadesk.Invalid, "dir and direction differ; give one").WithField(k)
		}
		v.Dir = strings.ToLower(one)
		if v.Dir != "" && v.Dir != "asc" && v.Dir != "desc" {
			return datadesk.Errorf(datadesk.Invalid, "%s must be asc or desc, not %q", k, one).WithField(k).WithAllowed("asc", "desc")
		}
	case "offset":
		return v.number(k, one, mode, func(n int64) { v.Offset = n })
	case "limit":
		if mode != ForAPI {
			return unknown(v.Table, k, mode)
		}
		if one == "" {
			return nil
		}
		n, err := strconv.Atoi(one)
		if err != nil || n < 1 || n > catalog.MaxPageSize {
			return datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to %d", catalog.MaxPageSize).WithField(k)
		}
		v.Limit = n
	case "msg":
		if mode != ForPage {
			return unknown(v.Table, k, mode)
		}
		v.Message = one
	case "g":
		v.Group.Column = one
	case "gb":
		v.Group.Bucket = one
	case "gm":
		v.Group.Op = one
	case "gc":
		v.Group.Of = one
	case "summary":
		return v.summaries(vals)
	case "col", "hide":
	default:
		return v.condParam(k, mode)
	}
	return nil
}

// number reads a whole number of 0 or more; a page's empty field is none.
func (v *View) number(k, s string, mode Mode, set func(int64)) error {
	if s == "" && mode == ForPage {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return datadesk.Errorf(datadesk.Invalid, "%s must be a whole number, 0 or more, not %q", k, s).WithField(k)
	}
	set(n)
	return nil
}

// condParam checks that k is a condition's parameter of one of the
// table's columns, named by its key exactly.
func (v *View) condParam(k string, mode Mode) error {
	prefix, key, ok := strings.Cut(k, ".")
	if ok && (prefix == "o" || prefix == "f" || prefix == "t") {
		for _, c := range v.Table.Columns {
			if c.Key == key {
				return nil
			}
		}
		if c, found := v.Table.Lookup(key); found {
			return datadesk.Errorf(datadesk.Invalid, "no column %q: did you mean %s.%s?", key, prefix, c.Key).WithField(k).WithAllowed(v.Table.Keys()...)
		}
		return datadesk.Errorf(datadesk.Invalid, "%s names no column of the table", k).WithField(k).WithAllowed(v.Table.Keys()...)
	}
	return unknown(v.Table, k, mode)
}

func unknown(t *catalog.Table, k string, mode Mode) error {
	return datadesk.Errorf(datadesk.Invalid, "unknown parameter %q", k).WithField(k).WithAllowed(Params(t, mode)...)
}

// summaries reads the columns to summarise, each once.
func (v *View) summaries(keys []string) error {
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		c, ok := v.Table.Lookup(k)
		if !ok {
			return datadesk.Errorf(datadesk.Invalid, "no column %q to summarise", k).WithField("summary").WithAllowed(v.Table.Keys()...)
		}
		if !slices.Contains(v.Summaries, c.Key) {
			v.Summaries = append(v.Summaries, c.Key)
		}
	}
	return nil
}

// chooseColumns reads the columns shown: col lists them in order, hide
// those left out of the table's order (or of col's).
func (v *View) chooseColumns(shown, hidden []string) error {
	keys := v.Table.Keys()
	if len(shown) > 0 {
		keys = nil
		for _, k := range shown {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
	}
	var out []string
	for _, k := range keys {
		c, ok := v.Table.Lookup(k)
		if !ok {
			return datadesk.Errorf(datadesk.Invalid, "no column %q to show", k).WithField("col").WithAllowed(v.Table.Keys()...)
		}
		if slices.Contains(out, c.Key) {
			return datadesk.Errorf(datadesk.Invalid, "column %q is shown twice", k).WithField("col")
		}
		out = append(out, c.Key)
	}
	for _, k := range hidden {
		c, ok := v.Table.Lookup(strings.TrimSpace(k))
		if !ok {
			return datadesk.Errorf(datadesk.Invalid, "no column %q to hide", k).WithField("hide").WithAllowed(v.Table.Keys()...)
		}
		out = slices.DeleteFunc(out, func(s string) bool { return s == c.Key })
	}
	if len(out) == 0 {
		return datadesk.Errorf(datadesk.Invalid, "every column is hidden; show one at least").WithField("hide")
	}
	if !slices.Equal(out, v.Table.Keys()) {
		v.Columns = out
	}
	return nil
}

// Shown are the keys of the columns the view shows, in order.
func (v *View) Shown() []string {
	if v.Columns == nil {
		return v.Table.Keys()
	}
	return v.Columns
}

// Clone is a copy of v that can be changed apart.
func (v *View) Clone() *View {
	c := *v
	c.Conds = make([][]Cond, len(v.Conds))
	for i, cs := range v.Conds {
		c.Conds[i] = slices.Clone(cs)
	}
	c.Columns, c.Summaries = slices.Clone(v.Columns), slices.Clone(v.Summaries)
	return &c
}

// AddCond adds a condition on the column of key (one of the table's).
func (v *View) AddCond(key string, c Cond) {
	for i, col := range v.Table.Columns {
		if col.Key == key {
			v.Conds[i] = append(v.Conds[i], c)
		}
	}
}

// Filtered reports whether the view keeps only some rows.
func (v *View) Filtered() bool {
	for _, cs := range v.Conds {
		if len(cs) > 0 {
			return true
		}
	}
	return v.Search != ""
}
