package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// oracleRow is one row of the generated table as plain Go values; nil
// pointers are empty cells.
type oracleRow struct {
	id     string
	region *string
	qty    *int64
	cents  *int64 // amount, in hundredths
	day    *string
	flag   bool
	note   *string
}

var oracleHeader = []string{"id", "region", "qty", "amount", "day", "flag", "note"}

func ptr[T any](v T) *T { return &v }

func genOracleRows(n int, rng *rand.Rand) []oracleRow {
	regions := []string{"North", "north", "South", "EAST", "West"}
	notes := []string{"fast gift", "Return", "fragile box", "express", "bulk order"}
	rows := make([]oracleRow, n)
	for i := range rows {
		r := oracleRow{id: fmt.Sprintf("%06d", rng.IntN(5000)), flag: rng.IntN(2) == 0}
		if rng.IntN(10) > 0 {
			r.region = ptr(regions[rng.IntN(len(regions))])
		}
		if rng.IntN(8) > 0 {
			r.qty = ptr(int64(rng.IntN(50)))
		}
		if rng.IntN(9) > 0 {
			r.cents = ptr(int64(rng.IntN(200000) - 20000))
		}
		if rng.IntN(7) > 0 {
			r.day = ptr(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(90)).Format("2006-01-02"))
		}
		if rng.IntN(3) > 0 {
			r.note = ptr(notes[rng.IntN(len(notes))])
		}
		rows[i] = r
	}
	return rows
}

func (r oracleRow) cells() []string {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	out := []string{r.id, s(r.region), "", "", s(r.day), strconv.FormatBool(r.flag), s(r.note)}
	if r.qty != nil {
		out[2] = strconv.FormatInt(*r.qty, 10)
	}
	if r.cents != nil {
		out[3] = centsText(*r.cents)
	}
	return out
}

func centsText(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// value returns column k of the row as the oracle compares it: string,
// int64, float64 (amount), bool, or nil.
func (r oracleRow) value(k string) any {
	switch k {
	case "id":
		return r.id
	case "region":
		if r.region == nil {
			return nil
		}
		return *r.region
	case "qty":
		if r.qty == nil {
			return nil
		}
		return *r.qty
	case "amount":
		if r.cents == nil {
			return nil
		}
		return *r.cents
	case "day":
		if r.day == nil {
			return nil
		}
		return *r.day
	case "flag":
		return r.flag
	case "note":
		if r.note == nil {
			return nil
		}
		return *r.note
	}
	panic(k)
}

// textForm is a value as CAST(... AS VARCHAR) prints it.
func textForm(k string, v any) string {
	switch x := v.(type) {
	case int64:
		if k == "amount" {
			return centsText(x)
		}
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return v.(string)
}

func num(k string, v any) float64 {
	x := float64(v.(int64))
	if k == "amount" {
		return x / 100
	}
	return x
}

// compare orders two non-null values of column k as DuckDB does.
func compare(k string, a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("%T", a))
}

var colTypes = map[string]string{"id": typing.TypeText, "region": typing.TypeText, "qty": typing.TypeInteger, "amount": typing.TypeDecimal, "day": typing.TypeDate, "flag": typing.TypeBoolean, "note": typing.TypeText}

// matches is the oracle's reading of one filter.
func matches(r oracleRow, f catalog.Filter) bool {
	v := r.value(f.Column)
	typ := colTypes[f.Column]
	if f.Op == "is_null" {
		return (v == nil) == f.Value.(bool)
	}
	if f.Op == "contains" {
		return v != nil && strings.Contains(strings.ToLower(textForm(f.Column, v)), strings.ToLower(catalog.ValueText(f.Value)))
	}
	cmp := func(want any) (int, bool) {
		if v == nil {
			return 0, false
		}
		switch typ {
		case typing.TypeText:
			return strings.Compare(strings.ToLower(v.(string)), strings.ToLower(catalog.ValueText(want))), true
		case typing.TypeInteger, typing.TypeDecimal:
			w, _ := strconv.ParseFloat(catalog.ValueText(want), 64)
			return compare("", num(f.Column, v), w), true
		case typing.TypeDate:
			return strings.Compare(v.(string), want.(string)), true
		case typing.TypeBoolean:
			return compare("", v, want), true
		}
		panic(typ)
	}
	switch f.Op {
	case "in":
		for _, w := range f.Value.([]any) {
			if c, ok := cmp(w); ok && c == 0 {
				return true
			}
		}
		return false
	case "ne":
		c, ok := cmp(f.Value)
		return !ok || c != 0
	}
	c, ok := cmp(f.Value)
	if !ok {
		return false
	}
	switch f.Op {
	case "eq":
		return c == 0
	case "gt":
		return c > 0
	case "gte":
		return c >= 0
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	}
	panic(f.Op)
}

// aggValue is the oracle's aggregate over rows, in the JSON form the
// engine answers with.
func aggValue(rows []oracleRow, a catalog.Aggregate) any {
	if a.Op == "count" {
		n := 0
		for _, r := range rows {
			if a.Column == "" || r.value(a.Column) != nil {
				n++
			}
		}
		return json.Number(strconv.Itoa(n))
	}
	var vals []int64
	for _, r := range rows {
		if v := r.value(a.Column); v != nil {
			vals = append(vals, v.(int64))
		}
	}
	if len(vals) == 0 {
		return nil
	}
	form := func(x int64) any {
		if a.Column == "amount" {
			return json.Number(centsText(x))
		}
		return json.Number(strconv.FormatInt(x, 10))
	}
	switch a.Op {
	case "sum":
		var s int64
		for _, x := range vals {
			s += x
		}
		return form(s)
	case "min", "max":
		m := vals[0]
		for _, x := range vals {
			if a.Op == "min" && x < m || a.Op == "max" && x > m {
				m = x
			}
		}
		return form(m)
	case "avg":
		var s int64
		for _, x := range vals {
			s += x
		}
		f := float64(s) / float64(len(vals))
		if a.Column == "amount" {
			f /= 100
		}
		return f
	}
	panic(a.Op)
}

// norm puts engine and oracle values in one comparable form.
func norm(v any) any {
	switch x := v.(type) {
	case json.Number:
		if strings.Contains(x.String(), ".") {
			return x.String()
		}
		n, _ := strconv.ParseInt(x.String(), 10, 64)
		return n
	case int64:
		return x
	case int32:
		return int64(x)
	case float64:
		return math.Round(x*1e6) / 1e6
	case string, bool, nil:
		return x
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func oracleCell(k string, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		if k == "amount" {
			return centsText(x)
		}
		return x
	}
	return v
}

type oracleAnswer struct {
	matched    int64
	groupCount int64
	aggregates map[string]any
	rows       [][]any
	hasMore    bool
}

func oracle(all []oracleRow, q catalog.Query) oracleAnswer {
	var m []oracleRow
	var idx []int
	for i, r := range all {
		ok := true
		for _, f := range q.Filters {
			ok = ok && matches(r, f)
		}
		if ok {
			m = append(m, r)
			idx = append(idx, i)
		}
	}
	ans := oracleAnswer{matched: int64(len(m))}
	desc := q.Direction == "desc"
	nullsLast := func(a, b any, k string) (int, bool) {
		switch {
		case a == nil && b == nil:
			return 0, true
		case a == nil:
			return 1, true
		case b == nil:
			return -1, true
		}
		return compare(k, a, b), false
	}
	if len(q.GroupBy) > 0 {
		aggs := q.Aggregates
		if len(aggs) == 0 {
			aggs = []catalog.Aggregate{{Op: "count"}}
		}
		type group struct {
			key  []any
			rows []oracleRow
		}
		var groups []*group
		byKey := map[string]*group{}
		for _, r := range m {
			var key []any
			for _, g := range q.GroupBy {
				key = append(key, r.value(g))
			}
			ks := fmt.Sprintf("%#v", key)
			if byKey[ks] == nil {
				byKey[ks] = &group{key: key}
				groups = append(groups, byKey[ks])
			}
			byKey[ks].rows = append(byKey[ks].rows, r)
		}
		type out struct {
			vals []any // group values then aggregates, oracle form
			sort []any // comparable values
		}
		var outs []out
		for _, g := range groups {
			var o out
			for i, k := range q.GroupBy {
				o.vals = append(o.vals, oracleCell(k, g.key[i]))
				o.sort = append(o.sort, g.key[i])
			}
			for _, a := range aggs {
				v := aggValue(g.rows, a)
				o.vals = append(o.vals, v)
				var sv any
				switch x := v.(type) {
				case json.Number:
					sv, _ = strconv.ParseFloat(x.String(), 64)
				case float64:
					sv = x
				}
				o.sort = append(o.sort, sv)
			}
			outs = append(outs, o)
		}
		sortIdx := -1
		names := groupNames(q.GroupBy, aggs)
		for i, n := range names {
			if n == q.SortBy && sortIdx < 0 {
				sortIdx = i
			}
		}
		sort.SliceStable(outs, func(i, j int) bool {
			if sortIdx >= 0 {
				k := ""
				if sortIdx < len(q.GroupBy) {
					k = q.GroupBy[sortIdx]
				}
				c, null := nullsLast(outs[i].sort[sortIdx], outs[j].sort[sortIdx], k)
				if !null && desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			for g := range q.GroupBy {
				c, _ := nullsLast(outs[i].sort[g], outs[j].sort[g], q.GroupBy[g])
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
		ans.groupCount = int64(len(outs))
		limit := q.Limit
		if limit == 0 {
			limit = catalog.DefaultGroupPage
		}
		for i := q.Offset; i < len(outs) && i < q.Offset+limit; i++ {
			ans.rows = append(ans.rows, outs[i].vals)
		}
		ans.hasMore = int64(q.Offset+len(ans.rows)) < ans.groupCount
		return ans
	}
	if len(q.Aggregates) > 0 {
		ans.aggregates = map[string]any{}
		for i, a := range q.Aggregates {
			ans.aggregates[groupNames(nil, q.Aggregates)[i]] = aggValue(m, a)
		}
	}
	order := make([]int, len(m))
	for i := range order {
		order[i] = i
	}
	if q.SortBy != "" {
		sort.SliceStable(order, func(i, j int) bool {
			c, null := nullsLast(m[order[i]].value(q.SortBy), m[order[j]].value(q.SortBy), q.SortBy)
			if !null && desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
			return idx[order[i]] < idx[order[j]]
		})
	}
	cols := q.Columns
	if len(cols) == 0 {
		cols = oracleHeader
	}
	for i := q.Offset; i < len(order) && i < q.Offset+q.Limit; i++ {
		var row []any
		for _, k := range cols {
			row = append(row, oracleCell(k, m[order[i]].value(k)))
		}
		ans.rows = append(ans.rows, row)
	}
	ans.hasMore = int64(q.Offset+len(ans.rows)) < ans.matched
	return ans
}

func groupNames(groupBy []string, aggs []catalog.Aggregate) []string {
	names := append([]string(nil), groupBy...)
	for _, a := range aggs {
		n := a.Name
		if n == "" {
			n = a.Op
			if a.Column != "" {
				n += "_" + a.Column
			}
		}
		names = append(names, n)
	}
	return names
}

// randomQuery makes a valid query over the generated table.
func randomQuery(rng *rand.Rand, rows []oracleRow) catalog.Query {
	q := catalog.Query{}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	sample := func(k string) any {
		for range 20 {
			if v := rows[rng.IntN(len(rows))].value(k); v != nil {
				switch x := v.(type) {
				case int64:
					return json.Number(textForm(k, x))
				case string:
					if rng.IntN(2) == 0 {
						return strings.ToUpper(x)
					}
					return x
				}
				return v
			}
		}
		return json.Number("1")
	}
	for range rng.IntN(4) {
		k := pick(oracleHeader)
		ops := []string{"eq", "ne", "contains", "in", "is_null"}
		if k != "flag" {
			ops = append(ops, "gt", "gte", "lt", "lte")
		}
		f := catalog.Filter{Column: k, Op: pick(ops)}
		switch f.Op {
		case "is_null":
			f.Value = rng.IntN(2) == 0
		case "in":
			var list []any
			for range 1 + rng.IntN(4) {
				list = append(list, sample(k))
			}
			f.Value = list
		case "contains":
			s := catalog.ValueText(sample(k))
			if len(s) > 2 {
				s = s[rng.IntN(len(s)/2) : len(s)-rng.IntN(len(s)/2)]
			}
			f.Value = s
		default:
			f.Value = sample(k)
		}
		if k == "id" && f.Op == "eq" && rng.IntN(2) == 0 {
			// A JSON number for an identifier matches its text exactly.
			n, _ := strconv.Atoi(sample("id").(string))
			f.Value = json.Number(strconv.Itoa(n))
		}
		q.Filters = append(q.Filters, f)
	}
	if rng.IntN(3) == 0 {
		for _, k := range []string{"region", "flag", "qty", "day"} {
			if rng.IntN(3) == 0 && len(q.GroupBy) < 3 {
				q.GroupBy = append(q.GroupBy, k)
			}
		}
	}
	for range rng.IntN(4) {
		a := catalog.Aggregate{Op: pick([]string{"count", "sum", "avg", "min", "max"})}
		if a.Op != "count" || rng.IntN(2) == 0 {
			a.Column = pick([]string{"qty", "amount"})
		}
		if a.Op == "count" && a.Column != "" && rng.IntN(2) == 0 {
			a.Column = pick(oracleHeader)
		}
		dup := false
		for _, n := range groupNames(q.GroupBy, append(q.Aggregates, a))[:len(q.GroupBy)+len(q.Aggregates)] {
			if n == groupNames(nil, []catalog.Aggregate{a})[0] {
				dup = true
			}
		}
		if !dup {
			q.Aggregates = append(q.Aggregates, a)
		}
	}
	if len(q.GroupBy) > 0 {
		names := groupNames(q.GroupBy, q.Aggregates)
		if len(q.Aggregates) == 0 {
			names = append(names, "count")
		}
		if rng.IntN(3) > 0 {
			q.SortBy = pick(names)
		}
		q.Limit = rng.IntN(6)
		q.Offset = rng.IntN(4)
	} else {
		if rng.IntN(2) == 0 {
			q.SortBy = pick(oracleHeader)
		}
		q.Limit = rng.IntN(21)
		q.Offset = rng.IntN(60)
		if rng.IntN(3) == 0 {
			q.Columns = []string{pick(oracleHeader), pick([]string{"qty", "amount", "day"})}
			if q.Columns[0] == q.Columns[1] {
				q.Columns = q.Columns[:1]
			}
		}
	}
	if rng.IntN(2) == 0 {
		q.Direction = "desc"
	}
	return q
}

// TestQueryOracle runs hundreds of random valid queries and compares every
// answer with a plain Go evaluation over the same rows.
func TestQueryOracle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	rows := genOracleRows(3000, rng)
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, r.cells())
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	f, err := s.AddFile(context.Background(), NewFile{Filename: "o.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("o", oracleHeader, cells)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range f.Tables[0].Columns {
		if c.Type != colTypes[oracleHeader[i]] {
			t.Fatalf("column %s typed %s, want %s", c.Key, c.Type, colTypes[oracleHeader[i]])
		}
	}
	for n := range 400 {
		q := randomQuery(rng, rows)
		q.FileID = f.ID
		qj, _ := json.Marshal(q)
		p, err := s.Plan(context.Background(), q)
		if err != nil {
			t.Fatalf("query %d %s: plan: %v", n, qj, err)
		}
		got, err := s.Run(context.Background(), p)
		if err != nil {
			t.Fatalf("query %d %s: run: %v", n, qj, err)
		}
		want := oracle(rows, q)
		fail := func(what string, g, w any) {
			t.Errorf("query %d %s\nsql %s\n%s: got %v, want %v", n, qj, got.SQL, what, g, w)
		}
		if got.MatchedRowCount != want.matched {
			fail("matched", got.MatchedRowCount, want.matched)
			continue
		}
		if len(q.GroupBy) > 0 && (got.GroupCount == nil || *got.GroupCount != want.groupCount) {
			fail("groups", got.GroupCount, want.groupCount)
			continue
		}
		paged := len(q.GroupBy) > 0 || q.Limit > 0
		if (got.HasMore != nil) != paged {
			fail("has_more present", got.HasMore != nil, paged)
		} else if paged && *got.HasMore != want.hasMore {
			fail("has_more", *got.HasMore, want.hasMore)
		}
		for k, w := range want.aggregates {
			if g := got.Aggregates[k]; fmt.Sprint(norm(g)) != fmt.Sprint(norm(w)) {
				fail("aggregate "+k, g, w)
			}
		}
		if len(got.Rows) != len(want.rows) {
			fail("row count", len(got.Rows), len(want.rows))
			continue
		}
		for i := range want.rows {
			for j := range want.rows[i] {
				if g, w := norm(got.Rows[i][j]), norm(want.rows[i][j]); fmt.Sprint(g) != fmt.Sprint(w) {
					fail(fmt.Sprintf("row %d col %d", i, j), got.Rows[i], want.rows[i])
					break
				}
			}
		}
	}
}

// TestDeepOffsetFileOrder pages deep into a table of several row groups
// without sort_by: the page must be the rows at that position in the file,
// even though its statement does not sort them all.
func TestDeepOffsetFileOrder(t *testing.T) {
	t.Parallel()
	const n = 300_000
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	src := TableSource{Name: "big", Header: []string{"id", "v"}, Rows: func(yield func([]string) error) (RowStats, error) {
		for i := 0; i < n; i++ {
			if err := yield([]string{fmt.Sprintf("%07d", i), strconv.Itoa(i % 7)}); err != nil {
				return RowStats{}, err
			}
		}
		return RowStats{}, nil
	}}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "big.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q     catalog.Query
		first string
	}{
		{catalog.Query{FileID: f.ID, Limit: 20, Offset: 100000}, "0100000"},
		{catalog.Query{FileID: f.ID, Limit: 5, Offset: 40000, Filters: []catalog.Filter{{Column: "v", Op: "eq", Value: json.Number("3")}}}, fmt.Sprintf("%07d", 3+7*40000)},
		{catalog.Query{FileID: f.ID, Limit: 20, Offset: 100000, SortBy: "v"}, ""},
	} {
		p, err := s.Plan(context.Background(), tc.q)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if tc.first == "" {
			continue
		}
		if got := res.Rows[0][0]; got != tc.first {
			t.Errorf("offset %d: first id %v, want %s", tc.q.Offset, got, tc.first)
		}
		for i := 1; i < len(res.Rows); i++ {
			if res.Rows[i][0].(string) <= res.Rows[i-1][0].(string) {
				t.Errorf("page out of order: %v", res.Rows)
			}
		}
	}
}

// TestBrowsePagesFromEitherEnd pages through a sorted table with nulls and
// ties: pages read from the end must equal the same pages read from the
// start.
func TestBrowsePagesFromEitherEnd(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	var rows [][]string
	for i := 0; i < 237; i++ {
		v := strconv.Itoa(i % 13)
		if i%17 == 0 {
			v = ""
		}
		rows = append(rows, []string{fmt.Sprintf("%04d", i), v})
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "x.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("x", []string{"id", "v"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"asc", "desc"} {
		var all [][]any
		for off := int64(0); off < 237; off += 10 {
			p, err := s.Rows(context.Background(), f.ID, catalog.PageRequest{Offset: off, Limit: 10, Sort: "v", Direction: dir})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Rows...)
		}
		// The same order, all at once from the start.
		whole, err := s.Rows(context.Background(), f.ID, catalog.PageRequest{Limit: 1000, Sort: "v", Direction: dir})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(all) != fmt.Sprint(whole.Rows) {
			t.Errorf("%s: paged rows differ from the whole", dir)
		}
	}
}
