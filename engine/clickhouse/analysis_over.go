package clickhouse

import (
	"context"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// The measures over the groups (change, pct_change, running_total, rank)
// and the ties top keeps are computed over the aggregated groups, after
// the computed measures. A server with window functions (ClickHouse 21.9
// on) computes them as DuckDB does, with lagInFrame, sum and rank over a
// window. ClickHouse 18.16 has none: each is a stage that gathers the
// rows of each partition into one sorted array (groupArray of a tuple of
// every column), computes the measure over the array (arrayCumSum, the
// array shifted by one, arrayEnumerateUniq for ranks) and unfolds the
// rows again with ARRAY JOIN. Its arrays of decimals crash it, so a
// decimal travels in the tuple as a whole number of its last places
// (1.50 as 150, exact for values under 9.2e18 of them) and is made a
// decimal of its scale again after; the stage's column types, read once
// with LIMIT 0, give the scales. A partition's array holds its groups, so
// the work is bounded by the groups, never by the rows.

// stageCol is a column of an analysis's stage and its ClickHouse type.
type stageCol struct{ name, typ string }

// chScale is the scale of a Decimal type, and whether typ is one.
func chScale(typ string) (int, bool) {
	t := strings.TrimSuffix(strings.TrimPrefix(typ, "Nullable("), ")")
	if !strings.HasPrefix(t, "Decimal") {
		return 0, false
	}
	i := strings.LastIndexAny(t, ",(")
	s, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(t[i+1:], ")")))
	return s, err == nil
}

// chPack is a column as it travels in a stage's arrays: a decimal as
// the whole number of its last places.
func chPack(col stageCol) string {
	if _, ok := chScale(col.typ); ok {
		return "toInt64(replaceOne(toString(" + chIdent(col.name) + "), '.', ''))"
	}
	return chIdent(col.name)
}

// chUnpack makes a packed value of type typ what it was.
func chUnpack(v, typ string) string {
	if s, ok := chScale(typ); ok {
		return "(toDecimal128(" + v + ", " + strconv.Itoa(s) + ") / 1" + strings.Repeat("0", s) + ")"
	}
	return v
}

// chDecimalOf is the type a packed decimal of typ is made again.
func chDecimalOf(typ string) string {
	s, _ := chScale(typ)
	return "Nullable(Decimal(38, " + strconv.Itoa(s) + "))"
}

// arrayStage is one stage of ClickHouse 18.16's measures over the groups:
// the rows of each partition (the groups of columns part) sorted by key
// (a lambda's body over a row __r, by sort: arraySort or
// arrayReverseSort), the arrays over the sorted rows __s, and the new
// column out of their elements __x0, __x1, ... in each row.
type arrayStage struct {
	part      []int
	sort, key string
	arrays    []string
	out       stageCol
	outExpr   string
}

// elem is column name's element of a stage's row __r.
func (a *chAnalysis) elem(name string) string {
	for k, col := range a.cols {
		if col.name == name {
			return "tupleElement(__r, " + strconv.Itoa(k+1) + ")"
		}
	}
	// Never reached: every stage names the columns the ones before made;
	// were it, ClickHouse would refuse the statement naming this one.
	return chIdent("__no_column_" + name)
}

// colType is the ClickHouse type of a stage's column.
func (a *chAnalysis) colType(name string) string {
	for _, col := range a.cols {
		if col.name == name {
			return col.typ
		}
	}
	return ""
}

// arrays applies an arrayStage to q and adds its column to the stage's.
func (a *chAnalysis) arrays(q string, st arrayStage) string {
	var packed, unpacked, part, made, joined []string
	for k, col := range a.cols {
		packed = append(packed, chPack(col))
		unpacked = append(unpacked, chUnpack("tupleElement(__r, "+strconv.Itoa(k+1)+")", col.typ)+" AS "+chIdent(col.name))
	}
	for _, g := range st.part {
		part = append(part, chInternal("g", g))
	}
	for i, e := range st.arrays {
		made = append(made, e+" AS __w"+strconv.Itoa(i))
		joined = append(joined, "__w"+strconv.Itoa(i)+" AS __x"+strconv.Itoa(i))
	}
	inner := "SELECT " + st.sort + "(__r -> " + st.key + ", groupArray(tuple(" + strings.Join(packed, ", ") + "))) AS __s FROM (" + q + ")"
	if len(part) > 0 {
		inner += " GROUP BY " + strings.Join(part, ", ")
	}
	a.cols = append(a.cols, st.out)
	return "SELECT " + strings.Join(unpacked, ", ") + ", " + st.outExpr + " AS " + chIdent(st.out.name) + " FROM (SELECT __s, " +
		strings.Join(made, ", ") + " FROM (" + inner + ")) ARRAY JOIN __s AS __r, " + strings.Join(joined, ", ")
}

// rankStage ranks the rows of each partition by column by in direction
// desc, NULLS LAST, ties sharing the least rank, as rank() does: a row's
// rank is its place in the sorted array less the rows before it equal to
// it.
func (a *chAnalysis) rankStage(q string, part []int, by string, desc bool, out string) string {
	v := a.elem(by)
	st := arrayStage{part: part, sort: "arraySort", key: "tuple(isNull(" + v + "), assumeNotNull(" + v + "))",
		out: stageCol{out, "Int64"}, outExpr: "toInt64(__x0 - __x1 + 1)"}
	if desc {
		st.sort, st.key = "arrayReverseSort", "tuple(isNotNull("+v+"), assumeNotNull("+v+"))"
	}
	st.arrays = []string{"arrayEnumerate(__s)", "arrayEnumerateUniq(arrayMap(__r -> " + st.key + ", __s))"}
	return a.arrays(q, st)
}

// seriesArrays is how an op over a series is computed on arrays: its
// arrays over the values followed xs and each one's previous prev, and
// its value in a row from their elements __x0, __x1, ..., the values
// followed being of ClickHouse type typ; scaled: a decimal followed gives
// a decimal.
type seriesArrays struct {
	arrays func(xs, prev string) []string
	out    func(typ string) string
	scaled bool
}

// stage computes the op of measure m (the i-th) over each series of the
// other groups, in the series' order.
func (op seriesArrays) stage(a *chAnalysis, q string, i int, m catalog.MeasureTerm) string {
	p := a.p
	var part []int
	for g := range p.Groups {
		if g != p.Series {
			part = append(part, g)
		}
	}
	s := a.elem("__g" + strconv.Itoa(p.Series))
	of := "__v" + strconv.Itoa(m.Of)
	typ := a.colType(of)
	xs := "arrayMap(__r -> toNullable(" + a.elem(of) + "), __s)"
	// Each value's previous one, NULL for the first (and none for none).
	prev := "arraySlice(arrayPushFront(" + xs + ", NULL), 1, length(__s))"
	st := arrayStage{part: part, sort: "arraySort", key: "tuple(isNull(" + s + "), assumeNotNull(" + s + "))",
		out: stageCol{"__v" + strconv.Itoa(i), "Nullable(Float64)"}, arrays: op.arrays(xs, prev), outExpr: op.out(typ)}
	if _, dec := chScale(typ); dec && op.scaled {
		st.out.typ = chDecimalOf(typ)
	}
	return a.arrays(q, st)
}

// overGroups adds the measures over the groups to the stage q of the
// groups and their other measures, and, with windows all, keeps the
// buckets the filters on the series column keep. On ClickHouse 18.16 it
// reads the stage's column types when a stage of arrays follows.
func (a *chAnalysis) overGroups(ctx context.Context, q string) (string, error) {
	p := a.p
	var windows []int
	for i, m := range p.Measures {
		if m.Window() {
			windows = append(windows, i)
		}
	}
	if a.windowFns {
		var cols []string
		for _, i := range windows {
			cols = append(cols, chMeasures[p.Measures[i].Op].window(a, p.Measures[i])+" AS "+chInternal("v", i))
		}
		if len(cols) > 0 {
			q = "SELECT *, " + strings.Join(cols, ", ") + " FROM (" + q + ")"
		}
	} else if len(windows) > 0 || p.Top != nil && !p.Top.Cut {
		var err error
		if q, err = a.narrow(ctx, q); err != nil {
			return "", err
		}
		for _, i := range windows {
			q = chMeasures[p.Measures[i].Op].arrays(a, q, i, p.Measures[i])
		}
	}
	if p.WindowsAll() {
		q = a.seriesKept(q)
	}
	return q, nil
}

// narrow keeps the columns a stage after the measures goes on with (the
// groups, each measure's value and each group's rows) and reads their
// types, for ClickHouse 18.16's stages.
func (a *chAnalysis) narrow(ctx context.Context, q string) (string, error) {
	var sel []string
	for i := range a.p.Groups {
		sel = append(sel, chInternal("g", i))
	}
	for i, m := range a.p.Measures {
		if !m.Window() {
			sel = append(sel, chInternal("v", i))
		}
	}
	q = "SELECT " + strings.Join(sel, ", ") + ", __n FROM (" + q + ")"
	r, err := a.c.query(ctx, q+" LIMIT 0", true)
	if err != nil {
		return "", err
	}
	r.Close()
	a.cols = a.cols[:0]
	for i, name := range r.names {
		a.cols = append(a.cols, stageCol{name, r.types[i]})
	}
	return q, nil
}

func chPartition(cols []string) string {
	if len(cols) == 0 {
		return ""
	}
	return "PARTITION BY " + strings.Join(cols, ", ") + " "
}

// seriesKept keeps the buckets the filters on the series column keep,
// compared as DuckDB compares its buckets: a timestamp column's bucket of
// days or longer as that day's midnight.
func (a *chAnalysis) seriesKept(q string) string {
	p := a.p
	key := "__g" + strconv.Itoa(p.Series)
	if g := p.Groups[p.Series]; g.Col.Type == typing.TypeTimestamp && g.Bucket != "hour" {
		q = "SELECT *, concat(" + chIdent(key) + ", ' 00:00:00') AS __ws FROM (" + q + ")"
		key = "__ws"
		a.cols = append(a.cols, stageCol{"__ws", "Nullable(String)"})
	}
	var terms []string
	for _, c := range p.SeriesWhere {
		c.Col = catalog.Column{Key: key, Type: c.Col.Type}
		terms = append(terms, chCond(c))
	}
	return "SELECT * FROM (" + q + ") WHERE " + strings.Join(terms, " AND ")
}

// topKept keeps, per combination of top's per groups, the groups ranked
// n-th or better by top's measure: ties with the n-th too.
func (a *chAnalysis) topKept(q string) string {
	t := a.p.Top
	by := chInternal("v", t.By)
	if a.windowFns {
		var part []string
		for _, g := range t.Per {
			part = append(part, chInternal("g", g))
		}
		q = "SELECT *, rank() OVER (" + chPartition(part) + "ORDER BY " + by + " " + chDir(t.Desc) + " NULLS LAST) AS __t FROM (" + q + ")"
	} else {
		q = a.rankStage(q, t.Per, "__v"+strconv.Itoa(t.By), t.Desc, "__t")
	}
	return "SELECT * FROM (" + q + ") WHERE __t <= " + strconv.Itoa(t.N)
}

// matched counts the rows of the buckets windows all keeps, from the
// stage q of the groups after them.
func (a *chAnalysis) matched(ctx context.Context, q string) (int64, string, error) {
	stmt := "SELECT toInt64(sum(__n)) FROM (" + q + ")"
	head, err := a.c.all(ctx, stmt)
	if err != nil {
		return 0, "", err
	}
	n, _ := head[0][0].(int64)
	return n, stmt, nil
}
