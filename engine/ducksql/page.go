package ducksql

import (
	"strconv"
	"strings"

	"datadesk/engine/catalog"
)

// PageReach is how near either end of the matching rows a page must start
// to be read in one statement, the order's first (or, read backwards,
// last) rows kept as DuckDB sorts: a heap of at most this many rows and
// the page. A page further in is found by its row ids first.
const PageReach = 10_000

// PageWay is how a page of a table's rows is read.
type PageWay int

const (
	// ByPosition reads a page of an unfiltered table in file order by its
	// row ids, which are its positions: the last page as fast as the first.
	ByPosition PageWay = iota
	// ByTop reads a page near either end in one statement (PageTop).
	ByTop
	// ByOrderIndex reads a deep page of an unfiltered sorted table from
	// its order stored once (OrderIndex): positions to row ids, then the
	// rows, each a read of a few row groups.
	ByOrderIndex
	// ByRowIDs reads a deep page of filtered rows in two steps: the page's
	// row ids, sorted with nothing else beside them (PageRowIDs), then
	// their rows (FetchRows). Sorting every column of a million rows to
	// keep fifty took five times as long as sorting their row ids.
	ByRowIDs
)

// WayOf is how the page p of total matching rows is read.
func WayOf(p *catalog.PagePlan, total int64) PageWay {
	switch {
	case !p.Filtered() && p.Sort == nil:
		return ByPosition
	case p.Offset < PageReach || total-p.Offset-int64(p.Limit) < PageReach:
		return ByTop
	case !p.Filtered():
		return ByOrderIndex
	}
	return ByRowIDs
}

func pageFrom(p *catalog.PagePlan) string { return " FROM data." + Ident(p.Table.ID) }

// pageOrder is the page's order, ties in file order, forwards or
// backwards (each term's direction and its nulls' place turned).
func pageOrder(p *catalog.PagePlan, backwards bool) string {
	if p.Sort == nil {
		if backwards {
			return "rowid DESC"
		}
		return "rowid"
	}
	dir := direction(p.Desc)
	keys := orderKeys(Ident(p.Sort.Key), p.Sort.Ordering())
	var terms []string
	for _, k := range keys {
		d, nulls := dir, "NULLS LAST"
		if k.nullHigh && dir == "DESC" {
			nulls = "NULLS FIRST"
		}
		if backwards {
			d, nulls = map[string]string{"ASC": "DESC", "DESC": "ASC"}[d], map[string]string{"NULLS LAST": "NULLS FIRST", "NULLS FIRST": "NULLS LAST"}[nulls]
		}
		terms = append(terms, k.expr+" "+d+" "+nulls)
	}
	if backwards {
		return strings.Join(terms, ", ") + ", rowid DESC"
	}
	return strings.Join(terms, ", ") + ", rowid"
}

// backwards reports whether a page is read from the end of total rows,
// and the limit and offset it is read with then: a page in the second
// half sorts as few rows as its mirror in the first.
func backwards(p *catalog.PagePlan, total int64) (bool, int64, int64) {
	tail := total - p.Offset
	if p.Offset > total/2 && tail > 0 {
		n := min(int64(p.Limit), tail)
		return true, n, tail - n
	}
	return false, int64(p.Limit), p.Offset
}

// PageCount counts the rows p's conditions keep.
func PageCount(p *catalog.PagePlan) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	return "SELECT count(*)" + pageFrom(p) + where, params
}

// PageByPosition reads the page of an unfiltered table in file order.
func PageByPosition(p *catalog.PagePlan) (string, []any) {
	return "SELECT *" + pageFrom(p) + " WHERE rowid >= ? AND rowid < ? ORDER BY rowid", []any{p.Offset, p.Offset + int64(p.Limit)}
}

// PageTop reads the page of total matching rows in one statement, from
// the end when it lies in the second half; back says its rows then come
// last first.
func PageTop(p *catalog.PagePlan, total int64) (q string, params []any, back bool) {
	return pageStatement(p, total, "*")
}

// PageRowIDs reads the row ids of the page of total matching rows, from
// the end when it lies in the second half (back).
func PageRowIDs(p *catalog.PagePlan, total int64) (q string, params []any, back bool) {
	return pageStatement(p, total, "rowid")
}

func pageStatement(p *catalog.PagePlan, total int64, what string) (string, []any, bool) {
	where, params := Where(p.Conds, p.Search)
	back, limit, offset := backwards(p, total)
	q := "SELECT " + what + pageFrom(p) + where + " ORDER BY " + pageOrder(p, back) + limitOffset(limit, offset)
	return q, params, back
}

// FetchRows reads the rows of the row ids bound to it (a BIGINT list),
// each after its row id, in no order.
func FetchRows(p *catalog.PagePlan) string {
	return "SELECT rowid, *" + pageFrom(p) + " WHERE rowid IN (SELECT unnest(?::BIGINT[]))"
}

// OrderSchema holds the stored orders of tables (OrderIndex), in each
// owner's database beside the tables (schema data).
const OrderSchema = "dd_order"

// OrderIndexName names the stored order of p's table by p's sort:
// <table id>_<column position>_<a or d>.
func OrderIndexName(p *catalog.PagePlan) string {
	at := 0
	for i, c := range p.Table.Columns {
		if c.Key == p.Sort.Key {
			at = i
		}
	}
	d := "a"
	if p.Desc {
		d = "d"
	}
	return p.Table.ID + "_" + strconv.Itoa(at) + "_" + d
}

// OrderIndex stores the order of an unfiltered sorted page's table: the
// row ids in that order, each at its position (a table written in order
// keeps it: its own row ids are the positions).
func OrderIndex(p *catalog.PagePlan) string {
	return "CREATE TABLE " + OrderSchema + "." + Ident(OrderIndexName(p)) + " AS SELECT rowid AS r" + pageFrom(p) +
		" ORDER BY " + pageOrder(p, false)
}

// PageByIndex reads an unfiltered sorted page through its table's stored
// order (OrderIndex).
func PageByIndex(p *catalog.PagePlan) (string, []any) {
	return "SELECT t.* FROM " + OrderSchema + "." + Ident(OrderIndexName(p)) + " k JOIN data." + Ident(p.Table.ID) +
		" t ON t.rowid = k.r WHERE k.rowid >= ? AND k.rowid < ? ORDER BY k.rowid", []any{p.Offset, p.Offset + int64(p.Limit)}
}
