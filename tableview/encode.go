package tableview

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// query writes an address's parameters in the order they were added,
// each escaped once.
type query struct{ b strings.Builder }

func (q *query) add(k, v string) {
	if q.b.Len() > 0 {
		q.b.WriteByte('&')
	}
	q.b.WriteString(url.QueryEscape(k))
	q.b.WriteByte('=')
	q.b.WriteString(url.QueryEscape(v))
}

// Encode writes the view's address, holding only what is set: a
// condition's operator only where it is not its column's default (and
// then empty before the last that is not), a value only where there is
// one, between's bound only up to the last given; the sort's direction
// only when descending; the columns as the hidden ones when the rest keep
// the table's order; a grouping's measure only when not a count. Parse
// reads it back to the same view.
func (v *View) Encode() string {
	var q query
	if v.Search != "" {
		q.add("q", v.Search)
	}
	for i, conds := range v.Conds {
		v.encodeConds(&q, i, conds)
	}
	if v.Sort != "" {
		q.add("sort", v.Sort)
		if v.Dir == "desc" {
			q.add("dir", "desc")
		}
	}
	v.encodeColumns(&q)
	for _, k := range v.Summaries {
		q.add("summary", k)
	}
	if g := v.Group; g.Column != "" {
		q.add("g", g.Column)
		if g.Bucket != "" {
			q.add("gb", g.Bucket)
		}
		if g.Op != "" && g.Op != "count" {
			q.add("gm", g.Op)
			if g.Of != "" {
				q.add("gc", g.Of)
			}
		}
	}
	if v.Offset > 0 {
		q.add("offset", strconv.FormatInt(v.Offset, 10))
	}
	if v.Limit > 0 {
		q.add("limit", strconv.Itoa(v.Limit))
	}
	return q.b.String()
}

// encodeConds writes column i's conditions, condition by condition, each
// list only as long as it needs to be to stay in step.
func (v *View) encodeConds(q *query, i int, conds []Cond) {
	col := v.Table.Columns[i]
	def := OpsFor(col.Type)[0].Value
	lastOp, lastVal, lastTo := -1, -1, -1
	for n, c := range conds {
		if c.Op != def {
			lastOp = n
		}
		if c.Value != "" {
			lastVal = n
		}
		if c.To != "" {
			lastTo = n
		}
	}
	for n, c := range conds {
		if n <= lastOp {
			op := c.Op
			if op == def {
				op = ""
			}
			q.add("o."+col.Key, op)
		}
		if n <= lastVal {
			q.add("f."+col.Key, c.Value)
		}
		if n <= lastTo {
			q.add("t."+col.Key, c.To)
		}
	}
}

// encodeColumns writes the columns shown: none when every one is, in the
// table's order; the hidden ones when the others keep that order; else
// the shown ones in theirs.
func (v *View) encodeColumns(q *query) {
	if v.Columns == nil {
		return
	}
	keys := v.Table.Keys()
	var kept []string
	for _, k := range keys {
		if slices.Contains(v.Columns, k) {
			kept = append(kept, k)
		}
	}
	if slices.Equal(kept, v.Columns) {
		for _, k := range keys {
			if !slices.Contains(v.Columns, k) {
				q.add("hide", k)
			}
		}
		return
	}
	for _, k := range v.Columns {
		q.add("col", k)
	}
}

// Href is the address of the view at path: path alone when nothing is
// set.
func (v *View) Href(path string) string {
	if s := v.Encode(); s != "" {
		return path + "?" + s
	}
	return path
}
