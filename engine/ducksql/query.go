package ducksql

import (
	"math"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// The DuckDB dialect of a plan: every name quoted, every value a bound
// parameter. A grouped answer is one grouped pass: the window functions
// sum(count(*)) OVER () and count(*) OVER () give the matched and group
// counts from the same scan as the page, after grouping and before LIMIT.
// An ungrouped page joins its counts (one pass over the filter's columns)
// to its rows (a top-N or a range of row ids), with no common table
// expression DuckDB would materialise for two readers.

// RowKey names the row number carried through a statement for file order.
const RowKey = "__row"

// outAlias names output column i of a statement.
func outAlias(i int) string { return `"o` + strconv.Itoa(i+1) + `"` }

// condition compiles one condition with its bound values, by its op's
// entry in conditions.
func condition(c catalog.Cond) (string, []any) {
	x := cond{Cond: c, col: Ident(c.Col.Key), values: c.Values}
	if c.AsNumber {
		x.col = numberOf(x.col)
	}
	x.lhs, x.place = operand(&c.Col)
	if c.AsNumber {
		x.lhs, x.place = x.col, "CAST(? AS DOUBLE)"
	}
	if c.Col.Type == typing.TypeInteger && allWhole(c.Values) {
		// A whole number compares with an integer column as an integer,
		// which DuckDB pushes into its scan; as a double it would cast
		// every value of the column first.
		x.place = "?"
		x.values = make([]any, len(c.Values))
		for i, v := range c.Values {
			x.values[i] = int64(v.(float64))
		}
	}
	sql, ok := conditions[c.Op]
	if !ok {
		return "", nil // an op without SQL here: TestOpTableComplete
	}
	return sql(x)
}

// textOf is column c as text, as text filters read it: a decimal as
// written, without the zeros that pad it to the column's scale (33.93911,
// not 33.93911000).
func textOf(c *catalog.Column) string {
	col := Ident(c.Key)
	switch c.Type {
	case typing.TypeText:
		return col
	case typing.TypeDecimal:
		return "regexp_replace(CAST(" + col + " AS VARCHAR), '[.]0*$|([.][0-9]*[1-9])0+$', '\\1')"
	}
	return "CAST(" + col + " AS VARCHAR)"
}

// allWhole reports whether every value is a whole number a double holds
// exactly (below 2^53), so that comparing it as an integer gives what
// comparing it as a double would.
func allWhole(values []any) bool {
	for _, v := range values {
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return false
		}
	}
	return true
}

// numberOf is a text column's value read as a number when it is one
// (catalog.NumberPattern), else NULL.
func numberOf(col string) string {
	return "TRY_CAST(CASE WHEN regexp_full_match(" + col + ", " + Literal(catalog.NumberPattern) + ") THEN " + col + " END AS DOUBLE)"
}

// operand returns how a column and a bound value are compared.
func operand(c *catalog.Column) (lhs, place string) {
	col := Ident(c.Key)
	switch c.Type {
	case typing.TypeInteger, typing.TypeDecimal, typing.TypeDouble:
		return col, "CAST(? AS DOUBLE)"
	case typing.TypeDate:
		return col, "CAST(? AS DATE)"
	case typing.TypeTimestamp:
		return col, "CAST(? AS TIMESTAMP)"
	case typing.TypeTime:
		return col, "CAST(? AS TIME)"
	case typing.TypeBoolean:
		return col, "?"
	}
	return "lower(" + col + ")", "lower(?)"
}

// Where compiles conditions and a search to a WHERE clause ("" for
// none) and its bound values.
func Where(conds []catalog.Cond, search *catalog.Search) (string, []any) {
	var terms []string
	var params []any
	for _, c := range conds {
		sql, ps := condition(c)
		terms = append(terms, sql)
		params = append(params, ps...)
	}
	if search != nil {
		var any []string
		for _, c := range search.Cols {
			any = append(any, "contains(lower("+Ident(c.Key)+"), lower(?))")
			params = append(params, search.Text)
		}
		terms = append(terms, "("+strings.Join(any, " OR ")+")")
	}
	if len(terms) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(terms, " AND "), params
}

// aggregateOf compiles an aggregate, the measure of its op.
func aggregateOf(a catalog.Agg) string {
	return aggregate(catalog.MeasureTerm{Name: a.Name, Op: a.Op, Col: a.Col})
}

func fromTable(p *catalog.Plan) string { return " FROM data." + Ident(p.Table.ID) }

func direction(desc bool) string {
	if desc {
		return "DESC"
	}
	return "ASC"
}

// groupOrder is a grouped result's order over its output aliases (or
// positions, with byPosition): the sort, then the group columns, which
// are unique per group.
//
// keyed, when given, are the first group column's order keys as columns
// of the groups (boundKeys), which its terms read instead of computing
// them again.
func groupOrder(p *catalog.Plan, byPosition bool, keyed []orderKey) string {
	out := func(i int) string {
		if byPosition {
			return strconv.Itoa(i + 1)
		}
		return outAlias(i)
	}
	// A natural group is ordered by expressions of its column, which a
	// position cannot stand in.
	term := func(i int, dir string) string {
		if i == 0 && keyed != nil {
			return orderOf(keyed, dir)
		}
		if i < len(p.Groups) && p.Groups[i].Natural() {
			e := out(i)
			if byPosition {
				e = Ident(p.Groups[i].Key)
			}
			return Order(e, p.Groups[i].Ordering(), dir)
		}
		return Order(out(i), catalog.ByText, dir)
	}
	var terms []string
	if p.Sort != nil {
		terms = append(terms, term(p.Sort.Out, direction(p.Sort.Desc)))
	}
	for i := range p.Groups {
		terms = append(terms, term(i, "ASC"))
	}
	return strings.Join(terms, ", ")
}

// Order is the order terms of expr in direction dir (ASC or DESC),
// nulls last. A natural column orders its values of digits alone by
// their number, before other values ascending and after them
// descending, then as text; "007" and "7" then by their text.
func Order(expr string, o catalog.Ordering, dir string) string {
	return orderOf(orderKeys(expr, o), dir)
}

// orderOf is the order terms of keys in direction dir.
func orderOf(keys []orderKey, dir string) string {
	terms := make([]string, len(keys))
	for i, k := range keys {
		nulls := " NULLS LAST"
		if k.nullHigh && dir == "DESC" {
			nulls = " NULLS FIRST"
		}
		terms[i] = k.expr + " " + dir + nulls
	}
	return strings.Join(terms, ", ")
}

// orderKey is one expression a value is ordered by. Its NULL is no value
// (last either way), unless nullHigh: then it is greater than any value,
// as DuckDB takes a struct's NULL field in arg_min and arg_max.
type orderKey struct {
	expr     string
	nullHigh bool
}

// orderKeys are the expressions expr orders by (Order). A natural
// column's digits are compared as an unsigned 128-bit number, which
// takes any count of leading zeros; the few values of digits past its
// range (TRY_CAST's NULL, greater than any in it) by their digits
// without leading zeros, by length and then digit by digit. Only those
// few are stripped of their zeros: stripping every value cost more than
// the rest of the order. A column whose values the load found all
// digits needs no test of each: by number then text when they fit
// (catalog.ByNumber), by length then text when none has a leading zero
// (catalog.ByLength, which spares the cast).
func orderKeys(expr string, o catalog.Ordering) []orderKey {
	switch o {
	case catalog.ByText:
		return []orderKey{{expr: expr}}
	case catalog.ByNumber:
		return []orderKey{{expr: "TRY_CAST(" + expr + " AS UHUGEINT)"}, {expr: expr}}
	case catalog.ByLength:
		return []orderKey{{expr: "strlen(" + expr + ")"}, {expr: expr}}
	}
	digits := "regexp_full_match(" + expr + ", '[0-9]+')"
	number := "TRY_CAST(" + expr + " AS UHUGEINT)"
	// Digits of up to 38 always fit (10^38 < 2^128): only longer ones
	// are cast again to find those past the range.
	long := "CASE WHEN length(" + expr + ") > 38 THEN " + digits + " AND " + number + " IS NULL ELSE false END"
	return []orderKey{
		{expr: "CASE WHEN " + expr + " IS NULL THEN NULL WHEN " + digits + " THEN 0 ELSE 1 END"},
		{expr: "CASE WHEN " + digits + " THEN " + number + " END", nullHigh: true},
		{expr: "CASE WHEN " + long + " THEN length(ltrim(" + expr + ", '0')) END"},
		{expr: "CASE WHEN " + long + " THEN ltrim(" + expr + ", '0') WHEN NOT " + digits + " THEN " + expr + " END"},
		{expr: expr},
	}
}

// rowOrder is an ungrouped result's order over the table's columns:
// the sort, then file order.
func rowOrder(p *catalog.Plan) string {
	if p.Sort == nil {
		return "rowid"
	}
	return Order(Ident(p.Sort.Col.Key), p.Sort.Col.Ordering(), direction(p.Sort.Desc)) + ", rowid"
}

// grouped is a grouped answer's statement: each row is a group of the
// page, then the matched count, the group count and how many groups have
// an empty group column, and the group column's first and last value
// when the plan asks for its Bounds. The groups are made once and read
// for the page, the counts and the bounds: counted by windows over every
// group before the page was cut, 1,000,000 groups took a third longer;
// a column's bounds read from its rows apart took as long again as the
// page (1,000,000 identifiers, some not digits: page 122 ms and bounds
// 99 ms apart, 138 ms together).
func grouped(p *catalog.Plan) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	keys := make([]string, len(p.Groups))
	outs := make([]string, 0, len(p.Groups)+len(p.Aggs))
	var groups strings.Builder
	groups.WriteString("SELECT ")
	for i, g := range p.Groups {
		keys[i] = Ident(g.Key)
		outs = append(outs, outAlias(i))
		groups.WriteString(keys[i] + " AS " + outAlias(i) + ", ")
	}
	for i, a := range p.Aggs {
		outs = append(outs, outAlias(len(p.Groups)+i))
		groups.WriteString(aggregateOf(a) + " AS " + outAlias(len(p.Groups)+i) + ", ")
	}
	groups.WriteString(`count(*) AS "__n"` + fromTable(p) + where + " GROUP BY " + strings.Join(keys, ", "))
	source, page := groups.String(), outs
	var keyed []orderKey
	if p.GroupBounds() {
		var cols string
		cols, keyed = boundKeys(p.Groups[0].Ordering())
		source = "SELECT *" + cols + " FROM (" + source + ")"
		page = append(append([]string(nil), outs...), keyNames(keyed)...)
	}
	order := groupOrder(p, false, keyed)
	var b strings.Builder
	b.WriteString(`WITH "__groups" AS MATERIALIZED (` + source + `) SELECT `)
	if keyed == nil {
		b.WriteString(`"__page".*, `)
	} else {
		// The page carries its keys for the order after the join; the
		// answer, its outputs alone.
		for _, o := range outs {
			b.WriteString(`"__page".` + o + ", ")
		}
	}
	b.WriteString(`"__counts".* FROM (SELECT ` + strings.Join(page, ", ") + ` FROM "__groups" ORDER BY ` + order + limitOffset(p.Limit, p.Offset) + `) AS "__page", `)
	b.WriteString(`(SELECT CAST(sum("__n") AS BIGINT) AS "matched", count(*) AS "groups", CAST(count(*) FILTER (WHERE ` + anyNull(outs[:len(keys)]) +
		`) AS BIGINT) AS "empty"`)
	if keyed != nil {
		for _, dir := range []string{"ASC", "DESC"} {
			b.WriteString(`, (SELECT ` + outAlias(0) + ` FROM "__groups" WHERE ` + outAlias(0) + ` IS NOT NULL ORDER BY ` + orderOf(keyed, dir) + ` LIMIT 1)`)
		}
	}
	b.WriteString(` FROM "__groups") AS "__counts"`)
	// A join keeps no order: the page is sorted again.
	b.WriteString(" ORDER BY " + order)
	return b.String(), params
}

// boundKeys are the order keys of a grouped plan's one group column
// (its output alias) for its bounds: those other than the column itself
// computed once for each group, as columns of the groups (cols, each
// after a comma), and the keys naming those columns.
func boundKeys(o catalog.Ordering) (cols string, keyed []orderKey) {
	for i, k := range orderKeys(outAlias(0), o) {
		if k.expr == outAlias(0) {
			keyed = append(keyed, k)
			continue
		}
		name := `"__k` + strconv.Itoa(i) + `"`
		cols += ", " + k.expr + " AS " + name
		keyed = append(keyed, orderKey{expr: name, nullHigh: k.nullHigh})
	}
	return cols, keyed
}

// keyNames are the computed columns among keyed (boundKeys).
func keyNames(keyed []orderKey) []string {
	var names []string
	for _, k := range keyed {
		if k.expr != outAlias(0) {
			names = append(names, k.expr)
		}
	}
	return names
}

// GroupCounts counts matched rows and groups apart, for a grouped
// page past the last group, which carries no counts of its own.
func GroupCounts(p *catalog.Plan) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	keys := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		keys[i] = Ident(g.Key)
	}
	return `SELECT CAST(coalesce(sum(n), 0) AS BIGINT), count(*), count(*) FILTER (WHERE e) FROM (SELECT count(*) AS n, ` +
		anyNull(keys) + ` AS e` + fromTable(p) + where + " GROUP BY " + strings.Join(keys, ", ") + ")", params
}

// anyNull is the condition that one of the quoted columns is NULL.
func anyNull(cols []string) string {
	terms := make([]string, len(cols))
	for i, c := range cols {
		terms[i] = c + " IS NULL"
	}
	return strings.Join(terms, " OR ")
}

// ungrouped is an ungrouped answer's statement: one row of the matched
// count and the aggregates, joined to the page's rows, if any.
func ungrouped(p *catalog.Plan) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	var b strings.Builder
	b.WriteString(`SELECT count(*) AS "matched"`)
	for i, a := range p.Aggs {
		b.WriteString(", " + aggregateOf(a) + " AS " + outAlias(i))
	}
	b.WriteString(fromTable(p) + where)
	if p.Limit == 0 {
		return b.String(), params
	}
	counts := b.String()
	b.Reset()
	b.WriteString("SELECT c.*, p.* FROM (" + counts + ") AS c LEFT JOIN (SELECT 1 AS present")
	for i, c := range p.Cols {
		b.WriteString(", " + Ident(c.Key) + ` AS "r` + strconv.Itoa(i+1) + `"`)
	}
	b.WriteString(`, rowid AS "z0"`)
	outer := `"z0"`
	if p.Sort != nil {
		b.WriteString(`, ` + Ident(p.Sort.Col.Key) + ` AS "z1"`)
		outer = Order(`"z1"`, p.Sort.Col.Ordering(), direction(p.Sort.Desc)) + `, "z0"`
	}
	pageParams := params
	if p.Sort == nil && !p.Filtered() {
		// Unfiltered, in file order: a stored table's row ids are its row
		// positions, so the page is a range of them.
		b.WriteString(fromTable(p) + ` WHERE rowid >= ? AND rowid < ? ORDER BY rowid`)
		pageParams = []any{p.Offset, p.Offset + p.Limit}
	} else {
		b.WriteString(fromTable(p) + where + " ORDER BY " + rowOrder(p) + limitOffset(p.Limit, p.Offset))
		pageParams = params
	}
	// The page is sorted again after the join, which keeps no order.
	b.WriteString(") AS p ON true ORDER BY " + outer)
	return b.String(), append(append([]any(nil), params...), pageParams...)
}

// Query returns the one statement that answers the query on DuckDB, and its
// bound values.
func Query(p *catalog.Plan) (string, []any) {
	if p.Grouped() {
		return grouped(p)
	}
	return ungrouped(p)
}

// View is the statement of a derived result's whole rows, in order,
// for a shown view: keys name its columns.
func View(p *catalog.Plan, keys []string) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	var b strings.Builder
	b.WriteString("SELECT ")
	if p.Grouped() {
		groups := make([]string, len(p.Groups))
		for i, g := range p.Groups {
			groups[i] = Ident(g.Key)
			b.WriteString(groups[i] + ", ")
		}
		for i, a := range p.Aggs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(aggregateOf(a) + " AS " + Ident(keys[len(p.Groups)+i]))
		}
		b.WriteString(fromTable(p) + where + " GROUP BY " + strings.Join(groups, ", ") + " ORDER BY " + groupOrder(p, true, nil))
		return b.String(), params
	}
	for i, c := range p.Cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Ident(c.Key))
	}
	b.WriteString(fromTable(p) + where + " ORDER BY " + rowOrder(p))
	return b.String(), params
}

// Stream is the statement of every row an ungrouped plan matches, in
// its order, with its columns.
func Stream(p *catalog.Plan) (string, []any) {
	where, params := Where(p.Conds, p.Search)
	cols := make([]string, len(p.Cols))
	for i, c := range p.Cols {
		cols[i] = Ident(c.Key)
	}
	return "SELECT " + strings.Join(cols, ", ") + fromTable(p) + where + " ORDER BY " + rowOrder(p), params
}
