package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// The analysis oracle: a generated table (dates, timestamps, text with
// blanks and padding, decimals, nulls, repeated keys) and a lookup table
// are loaded, and random analyses are answered by the engine and by a
// computation in Go over the same rows, which shares no code or SQL with
// it.

// cents is a decimal of two places, as a whole number of hundredths.
type cents int64

var anaHeader = []string{"country", "city", "cases", "price", "day", "ts", "flag"}

// anaRow is a row as stored: nil is an empty cell.
type anaRow map[string]any

var (
	anaCountries = []string{"DE", "FR", "ES", "IT", "US", "de"}
	anaCities    = []string{"Berlin", "Paris", "Madrid", "Rome", "Boston", "Lyon", "Bonn", "Nice", "Porto"}
	anaLookup    = map[string][2]any{"DE": {"Europe", int64(83)}, "FR": {"Europe", int64(68)}, "ES": {"Europe", int64(48)},
		"IT": {"Europe", int64(59)}, "US": {"America", int64(333)}}
)

// genAnalysisRows returns rows as stored and their cells as written,
// with blanks and padding that storing removes.
func genAnalysisRows(n int, rng *rand.Rand) ([]anaRow, [][]string) {
	rows := make([]anaRow, n)
	cells := make([][]string, n)
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		r := anaRow{}
		c := make([]string, len(anaHeader))
		if rng.IntN(10) > 0 {
			v := anaCountries[rng.IntN(len(anaCountries))]
			r["country"], c[0] = v, v
			if rng.IntN(6) == 0 {
				c[0] = " " + v + "  "
			}
		} else if rng.IntN(2) == 0 {
			c[0] = "  "
		}
		if rng.IntN(8) > 0 {
			v := anaCities[rng.IntN(len(anaCities))]
			r["city"], c[1] = v, v
		}
		if rng.IntN(8) > 0 {
			v := int64(rng.IntN(1000) - 100)
			r["cases"], c[2] = v, strconv.FormatInt(v, 10)
		}
		if rng.IntN(9) > 0 {
			v := cents(rng.IntN(100000) - 5000)
			r["price"], c[3] = v, decText(v, true)
		} else if rng.IntN(3) == 0 {
			c[3] = "   "
		}
		if rng.IntN(7) > 0 {
			v := start.AddDate(0, 0, rng.IntN(730)).Format("2006-01-02")
			r["day"], c[4] = v, v
		}
		if rng.IntN(7) > 0 {
			v := start.Add(time.Duration(rng.IntN(730*24*4)) * 15 * time.Minute)
			r["ts"], c[5] = v, v.Format("2006-01-02T15:04:05")
		}
		b := rng.IntN(2) == 0
		r["flag"], c[6] = b, strconv.FormatBool(b)
		rows[i], cells[i] = r, c
	}
	return rows, cells
}

// decText writes hundredths as a decimal: with both places when padded
// (as stored and written), else as text filters read it.
func decText(v cents, padded bool) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := fmt.Sprintf("%d.%02d", v/100, v%100)
	if !padded {
		s = strings.TrimSuffix(strings.TrimSuffix(s, "0"), "0")
		s = strings.TrimSuffix(s, ".")
	}
	if neg {
		s = "-" + s
	}
	return s
}

var anaTypes = map[string]string{"country": typing.TypeText, "city": typing.TypeText, "cases": typing.TypeInteger, "price": typing.TypeDecimal,
	"day": typing.TypeDate, "ts": typing.TypeTimestamp, "flag": typing.TypeBoolean,
	"lookup.code": typing.TypeText, "lookup.continent": typing.TypeText, "lookup.pop": typing.TypeInteger}

// get is a row's value of a column, through the lookup for lookup.*.
func (r anaRow) get(key string, lookup bool) any {
	if k, ok := strings.CutPrefix(key, "lookup."); ok {
		if !lookup {
			return nil
		}
		code, _ := r["country"].(string)
		l, ok := anaLookup[code]
		if !ok {
			return nil
		}
		switch k {
		case "code":
			return code
		case "continent":
			return l[0]
		}
		return l[1]
	}
	return r[key]
}

// textOf is a value as text filters read it.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case cents:
		return decText(x, false)
	case time.Time:
		return x.Format("2006-01-02 15:04:05")
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// numOf is a number's value, for comparisons and arithmetic.
func numOf(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case cents:
		return float64(x) / 100, true
	case float64:
		return x, true
	case int32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}

// anaCompare orders two values of one type, nil last.
func anaCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	if x, ok := numOf(a); ok {
		y, _ := numOf(b)
		return cmpFloat(x, y)
	}
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case time.Time:
		return x.Compare(b.(time.Time))
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	}
	panic(fmt.Sprintf("compare %T", a))
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// filterValue reads a filter's value as a column of typ holds it.
func filterValue(typ string, v any) any {
	switch typ {
	case typing.TypeInteger, typing.TypeDecimal, typing.TypeDouble:
		f, _ := numOf(v)
		if s, ok := v.(string); ok {
			f, _ = strconv.ParseFloat(s, 64)
		}
		return f
	case typing.TypeTimestamp:
		t, err := time.Parse("2006-01-02T15:04:05", v.(string))
		if err != nil {
			t, _ = time.Parse("2006-01-02", v.(string))
		}
		return t
	case typing.TypeBoolean:
		return v.(bool)
	}
	return catalog.ValueText(v)
}

// holds evaluates condition n of a filter tree on a row.
func holds(r anaRow, n catalog.FilterNode, lookup bool, types map[string]string) bool {
	if n.Any != nil {
		for _, k := range n.Any {
			if holds(r, k, lookup, types) {
				return true
			}
		}
		return false
	}
	if n.All != nil {
		for _, k := range n.All {
			if !holds(r, k, lookup, types) {
				return false
			}
		}
		return true
	}
	typ := types[n.Column]
	v := r.get(n.Column, lookup)
	lower := func(x any) any {
		if s, ok := x.(string); ok && typ == typing.TypeText {
			return strings.ToLower(s)
		}
		return x
	}
	cmp := func(w any) (int, bool) {
		if v == nil {
			return 0, false
		}
		return anaCompare(lower(v), lower(filterValue(typ, w))), true
	}
	switch n.Op {
	case "is_null":
		return (v == nil) == n.Value.(bool)
	case "is_blank":
		blank := v == nil || typ == typing.TypeText && strings.TrimSpace(v.(string)) == ""
		return blank == n.Value.(bool)
	case "contains", "starts_with", "ends_with":
		if v == nil {
			return false
		}
		s, w := strings.ToLower(textOf(v)), strings.ToLower(catalog.ValueText(n.Value))
		return map[string]func(string, string) bool{"contains": strings.Contains, "starts_with": strings.HasPrefix, "ends_with": strings.HasSuffix}[n.Op](s, w)
	case "in", "not_in":
		in := false
		for _, w := range n.Value.([]any) {
			c, ok := cmp(w)
			in = in || ok && c == 0
		}
		if n.Op == "not_in" {
			return v == nil || !in
		}
		return in
	case "between":
		lo, ok := cmp(n.Value.([]any)[0])
		hi, _ := cmp(n.Value.([]any)[1])
		return ok && lo >= 0 && hi <= 0
	case "ne":
		c, ok := cmp(n.Value)
		return !ok || c != 0
	}
	c, ok := cmp(n.Value)
	if !ok {
		return false
	}
	return map[string]bool{"eq": c == 0, "gt": c > 0, "gte": c >= 0, "lt": c < 0, "lte": c <= 0}[n.Op]
}

// bucketOf is a group value: the column's, or the start of its bucket.
func bucketOf(v any, bucket string) any {
	if v == nil || bucket == "" {
		return v
	}
	var t time.Time
	switch x := v.(type) {
	case string:
		t, _ = time.Parse("2006-01-02", x)
	case time.Time:
		t = x
	}
	day := func(y int, m time.Month, d int) any {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	}
	switch bucket {
	case "year":
		return day(t.Year(), 1, 1)
	case "quarter":
		return day(t.Year(), (t.Month()-1)/3*3+1, 1)
	case "month":
		return day(t.Year(), t.Month(), 1)
	case "week":
		back := (int(t.Weekday()) + 6) % 7
		return t.AddDate(0, 0, -back).Format("2006-01-02")
	case "day":
		return t.Format("2006-01-02")
	}
	return t.Truncate(time.Hour)
}

// anaGroup is a group of rows and its measures' values.
type anaGroup struct {
	keys []any
	rows []anaRow
	vals []any
}

// measureOf computes an aggregate measure over a group's rows.
func measureOf(m catalog.Measure, rows []anaRow, lookup bool) any {
	var vals []any
	for _, r := range rows {
		if m.Column == "" {
			vals = append(vals, true)
		} else if v := r.get(m.Column, lookup); v != nil {
			vals = append(vals, v)
		}
	}
	floats := func() []float64 {
		out := make([]float64, len(vals))
		for i, v := range vals {
			out[i], _ = numOf(v)
		}
		sort.Float64s(out)
		return out
	}
	quantile := func(p float64) any {
		f := floats()
		if len(f) == 0 {
			return nil
		}
		pos := p * float64(len(f)-1)
		lo := math.Floor(pos)
		return f[int(lo)] + (f[int(math.Ceil(pos))]-f[int(lo)])*(pos-lo)
	}
	switch m.Op {
	case "count":
		return int64(len(vals))
	case "count_distinct":
		seen := map[any]bool{}
		for _, v := range vals {
			seen[v] = true
		}
		return int64(len(seen))
	case "sum", "share":
		if len(vals) == 0 {
			if m.Op == "share" && m.Column == "" {
				return int64(0)
			}
			return nil
		}
		var s float64
		for _, v := range vals {
			f, _ := numOf(v)
			if v == true {
				f = 1
			}
			s += f
		}
		return s
	case "avg":
		if len(vals) == 0 {
			return nil
		}
		var s float64
		for _, f := range floats() {
			s += f
		}
		return s / float64(len(vals))
	case "min", "max":
		if len(vals) == 0 {
			return nil
		}
		best := vals[0]
		for _, v := range vals[1:] {
			if c := anaCompare(v, best); m.Op == "min" && c < 0 || m.Op == "max" && c > 0 {
				best = v
			}
		}
		return best
	case "first", "last":
		// The value at the least or greatest order_by; among rows tied
		// on it, the least value for first, the greatest for last.
		var best anaRow
		for _, r := range rows {
			v, o := r.get(m.Column, lookup), r.get(m.OrderBy, lookup)
			if v == nil || o == nil {
				continue
			}
			if best == nil {
				best = r
				continue
			}
			c := anaCompare(o, best.get(m.OrderBy, lookup))
			if c == 0 {
				c = anaCompare(v, best.get(m.Column, lookup))
			}
			if m.Op == "first" && c < 0 || m.Op == "last" && c > 0 {
				best = r
			}
		}
		if best == nil {
			return nil
		}
		return best.get(m.Column, lookup)
	case "mode":
		// The most frequent value; of those tied, the least.
		counts := map[any]int{}
		var best any
		for _, v := range vals {
			counts[v]++
		}
		for v, n := range counts {
			if best == nil || n > counts[best] || n == counts[best] && anaCompare(v, best) < 0 {
				best = v
			}
		}
		return best
	case "median":
		return quantile(0.5)
	case "percentile":
		return quantile(*m.P)
	case "stddev":
		f := floats()
		if len(f) < 2 {
			return nil
		}
		var mean float64
		for _, x := range f {
			mean += x
		}
		mean /= float64(len(f))
		var ss float64
		for _, x := range f {
			ss += (x - mean) * (x - mean)
		}
		return math.Sqrt(ss / float64(len(f)-1))
	}
	panic(m.Op)
}

// evalExpr computes an expression over a group's measure values; nil
// propagates, and a division by zero is nil.
func evalExpr(e *catalog.Expr, vals []any) any {
	switch e.Op {
	case '#':
		return e.Num
	case '$':
		if vals[e.Ref] == nil {
			return nil
		}
		f, _ := numOf(vals[e.Ref])
		return f
	case '~':
		l := evalExpr(e.L, vals)
		if l == nil {
			return nil
		}
		return -l.(float64)
	}
	l, r := evalExpr(e.L, vals), evalExpr(e.R, vals)
	if l == nil || r == nil {
		return nil
	}
	x, y := l.(float64), r.(float64)
	switch e.Op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	}
	if y == 0 {
		return nil
	}
	return x / y
}

// anaWant is the oracle's answer.
type anaWant struct {
	matched, groups, empty, tied int64
	rows                         [][]any
}

// analyzeOracle answers analysis p over rows in Go.
func analyzeOracle(rows []anaRow, p *catalog.AnalysisPlan) anaWant {
	a := p.Analysis
	lookup := a.Lookup != nil
	// With windows all, the filters on the series column keep buckets
	// after the measures over the groups ran over all of them.
	rowFilters, held := a.Filters, []catalog.FilterNode(nil)
	if a.Windows == catalog.WindowsAll {
		rowFilters = nil
		series := a.GroupBy[p.Series].Column
		for _, n := range a.Filters {
			if n.Column == series && n.Any == nil && n.All == nil {
				held = append(held, n)
			} else {
				rowFilters = append(rowFilters, n)
			}
		}
	}
	var matched []anaRow
	for _, r := range rows {
		ok := true
		for _, n := range rowFilters {
			ok = ok && holds(r, n, lookup, anaTypes)
		}
		if ok {
			matched = append(matched, r)
		}
	}
	w := anaWant{matched: int64(len(matched))}
	var groups []*anaGroup
	index := map[string]*anaGroup{}
	if !p.Grouped() {
		groups = []*anaGroup{{rows: matched}}
	}
	for _, r := range matched {
		if !p.Grouped() {
			break
		}
		keys := make([]any, len(a.GroupBy))
		for i, g := range a.GroupBy {
			keys[i] = bucketOf(r.get(g.Column, lookup), g.Bucket)
		}
		k := fmt.Sprint(keys...)
		g := index[k]
		if g == nil {
			g = &anaGroup{keys: keys}
			index[k] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, r)
	}
	ms := a.Measures
	for _, g := range groups {
		g.vals = make([]any, len(ms))
		for i, m := range ms {
			if m.Expr == "" && !p.Measures[i].Window() {
				g.vals[i] = measureOf(m, g.rows, lookup)
			}
		}
	}
	for i, m := range ms {
		if m.Op != "share" {
			continue
		}
		var total float64
		for _, g := range groups {
			if f, ok := numOf(g.vals[i]); ok {
				total += f
			}
		}
		for _, g := range groups {
			f, ok := numOf(g.vals[i])
			if !ok || total == 0 {
				g.vals[i] = nil
				continue
			}
			g.vals[i] = f / total
		}
	}
	for range ms {
		for i := range ms {
			if p.Measures[i].Op == "expr" {
				for _, g := range groups {
					g.vals[i] = evalExpr(p.Measures[i].Expr, g.vals)
				}
			}
		}
	}
	for i := range ms {
		if p.Measures[i].Window() {
			windowOracle(p, groups, i)
		}
	}
	if held != nil {
		series := a.GroupBy[p.Series].Column
		typ := anaTypes[series]
		var shown []*anaGroup
		w.matched = 0
		for _, g := range groups {
			b := g.keys[p.Series]
			if s, ok := b.(string); ok && typ == typing.TypeTimestamp {
				b, _ = time.Parse("2006-01-02", s)
			}
			ok := true
			for _, n := range held {
				n.Column = "v"
				ok = ok && holds(anaRow{"v": b}, n, false, map[string]string{"v": typ})
			}
			if ok {
				shown = append(shown, g)
				w.matched += int64(len(g.rows))
			}
		}
		groups = shown
	}
	kept := groups[:0:0]
	for _, g := range groups {
		ok := true
		for _, h := range a.Having {
			m := slices.IndexFunc(p.Measures, func(t catalog.MeasureTerm) bool { return t.Name == h.Measure })
			ok = ok && holds(anaRow{"v": g.vals[m]}, catalog.FilterNode{Column: "v", Op: h.Op, Value: h.Value}, false, map[string]string{"v": p.Measures[m].Type})
		}
		if ok {
			kept = append(kept, g)
		}
	}
	if p.Top != nil {
		kept, w.tied = topOracle(p, kept)
	}
	if !p.Grouped() {
		out := make([]any, len(ms))
		copy(out, groups[0].vals)
		w.rows = [][]any{out}
		return w
	}
	w.groups = int64(len(kept))
	for _, g := range kept {
		if slices.Contains(g.keys, nil) {
			w.empty++
		}
	}
	out := func(g *anaGroup, i int) any {
		if i < len(g.keys) {
			return g.keys[i]
		}
		return g.vals[i-len(g.keys)]
	}
	sort.SliceStable(kept, func(x, y int) bool {
		for _, s := range p.Sort {
			a, b := out(kept[x], s.Out), out(kept[y], s.Out)
			c := anaCompare(a, b)
			if s.Desc && a != nil && b != nil {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	for _, g := range kept[min(p.Offset, len(kept)):min(p.Offset+p.Limit, len(kept))] {
		row := append(slices.Clone(g.keys), g.vals...)
		w.rows = append(w.rows, row)
	}
	return w
}

// windowOracle computes measure i, over the groups.
func windowOracle(p *catalog.AnalysisPlan, groups []*anaGroup, i int) {
	m := p.Measures[i]
	parts := map[string][]*anaGroup{}
	var order []string
	for _, g := range groups {
		var key []any
		for j := range p.Groups {
			if m.Op == "rank" && slices.Contains(m.Within, j) || m.Op != "rank" && j != p.Series {
				key = append(key, g.keys[j])
			}
		}
		k := fmt.Sprint(key...)
		if parts[k] == nil {
			order = append(order, k)
		}
		parts[k] = append(parts[k], g)
	}
	for _, k := range order {
		part := parts[k]
		if m.Op == "rank" {
			for _, g := range part {
				n := int64(1)
				for _, o := range part {
					c := anaCompare(o.vals[m.Of], g.vals[m.Of])
					if m.Desc && o.vals[m.Of] != nil && g.vals[m.Of] != nil {
						c = -c
					}
					if c < 0 {
						n++
					}
				}
				g.vals[i] = n
			}
			continue
		}
		sort.SliceStable(part, func(x, y int) bool { return anaCompare(part[x].keys[p.Series], part[y].keys[p.Series]) < 0 })
		var run float64
		var runSet bool
		for j, g := range part {
			v, ok := numOf(g.vals[m.Of])
			switch m.Op {
			case "running_total":
				if ok {
					run, runSet = run+v, true
				}
				g.vals[i] = nil
				if runSet {
					g.vals[i] = run
				}
			case "change", "pct_change":
				g.vals[i] = nil
				if j == 0 || !ok {
					continue
				}
				prev, pok := numOf(part[j-1].vals[m.Of])
				if !pok {
					continue
				}
				if m.Op == "change" {
					g.vals[i] = v - prev
				} else if prev != 0 {
					g.vals[i] = (v - prev) / prev
				}
			}
		}
	}
}

// topOracle keeps the first N groups per combination of the Per groups
// and, unless ties are cut, every group tied with the n-th; it counts the
// groups past the n-th tied with it.
func topOracle(p *catalog.AnalysisPlan, groups []*anaGroup) ([]*anaGroup, int64) {
	t := p.Top
	ranked := slices.Clone(groups)
	sort.SliceStable(ranked, func(x, y int) bool {
		a, b := ranked[x].vals[t.By], ranked[y].vals[t.By]
		c := anaCompare(a, b)
		if t.Desc && a != nil && b != nil {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
		for j := range p.Groups {
			if c := anaCompare(ranked[x].keys[j], ranked[y].keys[j]); c != 0 {
				return c < 0
			}
		}
		return false
	})
	seen := map[string]int{}
	nth := map[string]*anaGroup{}
	var out []*anaGroup
	var tied int64
	for _, g := range ranked {
		var key []any
		for _, j := range t.Per {
			key = append(key, g.keys[j])
		}
		k := fmt.Sprint(key...)
		seen[k]++
		switch {
		case seen[k] <= t.N:
			out = append(out, g)
			if seen[k] == t.N {
				nth[k] = g
			}
		case nth[k] != nil && anaCompare(g.vals[t.By], nth[k].vals[t.By]) == 0:
			tied++
			if !t.Cut {
				out = append(out, g)
			}
		}
	}
	return out, tied
}

// sameAnalysisValue compares an engine value with the oracle's: numbers within a
// relative 1e-9, times as the engine writes them.
func sameAnalysisValue(got, want any) bool {
	if t, ok := want.(time.Time); ok {
		want = t.Format(catalog.TimestampLayout)
	}
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	if x, ok := numOf(got); ok {
		y, ok := numOf(want)
		return ok && math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

// anaGen makes random analyses of the generated table.
type anaGen struct {
	rng    *rand.Rand
	lookup string
}

func (g *anaGen) pick(vs ...string) string { return vs[g.rng.IntN(len(vs))] }

func (g *anaGen) cond(cols []string) catalog.FilterNode {
	col := cols[g.rng.IntN(len(cols))]
	n := catalog.FilterNode{Column: col}
	num := func(lo, hi int) json.Number { return json.Number(strconv.Itoa(lo + g.rng.IntN(hi-lo))) }
	day := func() string {
		return time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, g.rng.IntN(760)).Format("2006-01-02")
	}
	switch anaTypes[col] {
	case typing.TypeText:
		vals := append(slices.Clone(anaCountries), anaCities...)
		vals = append(vals, "Europe", "america", "pa", "XX")
		v := func() any { return vals[g.rng.IntN(len(vals))] }
		n.Op = g.pick("eq", "ne", "in", "not_in", "contains", "starts_with", "ends_with", "is_null", "is_blank", "gt", "lt")
		switch n.Op {
		case "in", "not_in":
			n.Value = []any{v(), v()}
		case "is_null", "is_blank":
			n.Value = g.rng.IntN(2) == 0
		case "contains", "starts_with", "ends_with":
			n.Value = strings.ToLower(v().(string))[:1+g.rng.IntN(2)]
		default:
			n.Value = v()
		}
	case typing.TypeInteger, typing.TypeDecimal:
		n.Op = g.pick("eq", "ne", "gt", "gte", "lt", "lte", "between", "in", "not_in", "is_null", "contains", "ends_with")
		switch n.Op {
		case "between":
			lo := g.rng.IntN(500) - 100
			n.Value = []any{json.Number(strconv.Itoa(lo)), json.Number(strconv.Itoa(lo + g.rng.IntN(400)))}
		case "in", "not_in":
			n.Value = []any{num(-100, 900), num(-100, 900)}
		case "is_null":
			n.Value = g.rng.IntN(2) == 0
		case "contains", "ends_with":
			n.Value = strconv.Itoa(g.rng.IntN(10))
		default:
			n.Value = num(-100, 900)
		}
	case typing.TypeDate:
		n.Op = g.pick("gte", "lt", "between", "is_null", "eq", "starts_with")
		switch n.Op {
		case "between":
			n.Value = []any{day(), day()}
		case "is_null":
			n.Value = g.rng.IntN(2) == 0
		case "starts_with":
			n.Value = g.pick("2023", "2024-0", "2024-1")
		default:
			n.Value = day()
		}
	case typing.TypeTimestamp:
		n.Op = g.pick("gt", "lte", "between", "is_null")
		ts := func() any { return day() + "T" + fmt.Sprintf("%02d:00:00", g.rng.IntN(24)) }
		switch n.Op {
		case "between":
			n.Value = []any{ts(), ts()}
		case "is_null":
			n.Value = g.rng.IntN(2) == 0
		default:
			n.Value = ts()
		}
	case typing.TypeBoolean:
		n.Op, n.Value = "eq", g.rng.IntN(2) == 0
	}
	return n
}

func (g *anaGen) node(cols []string, depth int) catalog.FilterNode {
	if depth >= 2 || g.rng.IntN(10) < 7 {
		return g.cond(cols)
	}
	kids := make([]catalog.FilterNode, 2+g.rng.IntN(2))
	for i := range kids {
		kids[i] = g.node(cols, depth+1)
	}
	if g.rng.IntN(2) == 0 {
		return catalog.FilterNode{Any: kids}
	}
	return catalog.FilterNode{All: kids}
}

// integral are the measures whose values are whole numbers, which sort
// and rank the same in both computations.
func integral(m catalog.Measure) bool {
	return m.Op == "count" || m.Op == "count_distinct" || m.Op == "rank" || m.Op == "sum" && m.Column == "cases"
}

func (g *anaGen) analysis() catalog.Analysis {
	var a catalog.Analysis
	cols := []string{"country", "city", "cases", "price", "day", "ts", "flag"}
	if g.rng.IntN(10) < 3 {
		a.Lookup = &catalog.Lookup{FileID: g.lookup, On: []catalog.LookupJoin{{Column: "country", LookupColumn: "code"}}}
		cols = append(cols, "lookup.continent", "lookup.pop")
	}
	for range g.rng.IntN(4) {
		a.Filters = append(a.Filters, g.node(cols, 0))
	}
	groupable := []catalog.GroupBy{{Column: "country"}, {Column: "city"}, {Column: "flag"},
		{Column: "day", Bucket: g.pick("year", "quarter", "month", "week", "day")},
		{Column: "ts", Bucket: g.pick("month", "day", "hour")}}
	if a.Lookup != nil {
		groupable = append(groupable, catalog.GroupBy{Column: "lookup.continent"})
	}
	g.rng.Shuffle(len(groupable), func(i, j int) { groupable[i], groupable[j] = groupable[j], groupable[i] })
	a.GroupBy = groupable[:g.rng.IntN(3)]
	series := slices.IndexFunc(a.GroupBy, func(gb catalog.GroupBy) bool { return gb.Bucket != "" }) >= 0
	var names []string
	add := func(m catalog.Measure) {
		m.Name = "m" + strconv.Itoa(len(a.Measures)+1)
		a.Measures = append(a.Measures, m)
		names = append(names, m.Name)
	}
	p := func(f float64) *float64 { return &f }
	for range 1 + g.rng.IntN(4) {
		switch g.rng.IntN(13) {
		case 0:
			add(catalog.Measure{Op: "count"})
		case 1:
			add(catalog.Measure{Op: "count", Column: g.pick("price", "day", "city")})
		case 2:
			add(catalog.Measure{Op: "count_distinct", Column: g.pick("city", "country", "day", "price")})
		case 3:
			add(catalog.Measure{Op: "sum", Column: g.pick("cases", "price")})
		case 4:
			add(catalog.Measure{Op: "avg", Column: g.pick("cases", "price")})
		case 5:
			add(catalog.Measure{Op: g.pick("min", "max"), Column: g.pick("cases", "price", "day", "ts", "city")})
		case 6:
			add(catalog.Measure{Op: "median", Column: g.pick("cases", "price")})
		case 7:
			add(catalog.Measure{Op: "percentile", Column: g.pick("cases", "price"), P: p([]float64{0.1, 0.25, 0.9, 1}[g.rng.IntN(4)])})
		case 8:
			add(catalog.Measure{Op: "stddev", Column: g.pick("cases", "price")})
		case 9:
			add(catalog.Measure{Op: "share", Column: g.pick("", "cases", "price")})
		case 10:
			add(catalog.Measure{Op: "count_distinct", Column: "country"})
		case 11:
			add(catalog.Measure{Op: g.pick("first", "last"), Column: g.pick("cases", "price", "city", "day"), OrderBy: g.pick("day", "ts", "cases", "price")})
		case 12:
			add(catalog.Measure{Op: "mode", Column: g.pick("country", "city", "cases", "price", "day", "ts", "flag")})
		}
	}
	base := slices.Clone(a.Measures)
	numeric := func(m catalog.Measure) bool {
		return !(m.Op == "min" || m.Op == "max" || m.Op == "first" || m.Op == "last" || m.Op == "mode") || m.Column == "cases" || m.Column == "price"
	}
	if g.rng.IntN(3) == 0 {
		var ok []string
		for _, m := range base {
			if numeric(m) {
				ok = append(ok, m.Name)
			}
		}
		if len(ok) > 0 {
			x, y := ok[g.rng.IntN(len(ok))], ok[g.rng.IntN(len(ok))]
			add(catalog.Measure{Expr: g.pick(x+" / "+y, x+" - 2 * "+y, "-("+x+" + 1.5) * "+y, x+" / 0")})
		}
	}
	var whole []string
	for _, m := range base {
		if integral(m) {
			whole = append(whole, m.Name)
		}
	}
	if len(a.GroupBy) > 0 && len(whole) > 0 && g.rng.IntN(2) == 0 {
		of := whole[g.rng.IntN(len(whole))]
		switch op := g.pick("rank", "change", "pct_change", "running_total"); {
		case op == "rank":
			m := catalog.Measure{Op: op, Of: of, Direction: g.pick("", "asc", "desc")}
			if len(a.GroupBy) > 1 && g.rng.IntN(2) == 0 {
				m.Within = []string{strings.ReplaceAll(a.GroupBy[0].Column, ".", "_") + bucketSuffix(a.GroupBy[0])}
			}
			add(m)
			whole = append(whole, names[len(names)-1])
		case series:
			add(catalog.Measure{Op: op, Of: of})
		}
	}
	if len(a.GroupBy) > 0 && len(whole) > 0 && g.rng.IntN(3) == 0 {
		a.Having = []catalog.Having{{Measure: whole[g.rng.IntN(len(whole))], Op: g.pick("gt", "gte", "lt", "between"), Value: json.Number(strconv.Itoa(g.rng.IntN(30)))}}
		if a.Having[0].Op == "between" {
			a.Having[0].Value = []any{json.Number("2"), json.Number(strconv.Itoa(5 + g.rng.IntN(200)))}
		}
	}
	if len(a.GroupBy) == 2 && len(whole) > 0 && g.rng.IntN(3) == 0 {
		a.Top = &catalog.Top{N: 1 + g.rng.IntN(3), Per: []string{strings.ReplaceAll(a.GroupBy[0].Column, ".", "_") + bucketSuffix(a.GroupBy[0])},
			By: whole[g.rng.IntN(len(whole))], Direction: g.pick("", "asc"), Ties: g.pick("", "keep", "cut")}
	}
	// Windows over every bucket, with a filter on the series column.
	overGroups := slices.ContainsFunc(a.Measures, func(m catalog.Measure) bool {
		return slices.Contains([]string{"change", "pct_change", "running_total", "rank", "share"}, m.Op)
	})
	if s := slices.IndexFunc(a.GroupBy, func(gb catalog.GroupBy) bool { return gb.Bucket != "" }); s >= 0 && overGroups && g.rng.IntN(2) == 0 {
		a.Windows = g.pick(catalog.WindowsAll, catalog.WindowsFiltered)
		if g.rng.IntN(4) > 0 {
			a.Filters = append(a.Filters, g.cond([]string{a.GroupBy[s].Column}))
		}
	}
	if len(a.GroupBy) > 0 && g.rng.IntN(2) == 0 {
		sortable := slices.Clone(whole)
		for _, gb := range a.GroupBy {
			sortable = append(sortable, strings.ReplaceAll(gb.Column, ".", "_")+bucketSuffix(gb))
		}
		a.SortBy, a.Direction = sortable[g.rng.IntN(len(sortable))], g.pick("", "asc", "desc")
	}
	a.Limit = []int{0, 1, 5, catalog.MaxAnalysisPage}[g.rng.IntN(4)]
	if g.rng.IntN(5) == 0 {
		a.Offset = g.rng.IntN(40)
	}
	return a
}

func bucketSuffix(gb catalog.GroupBy) string {
	if gb.Bucket == "" {
		return ""
	}
	return "_" + gb.Bucket
}

// loadAnalysisTables stores the generated table and the lookup table.
func loadAnalysisTables(t *testing.T, s *Store, cells [][]string) (*catalog.File, *catalog.File) {
	t.Helper()
	f, err := s.AddFile(context.Background(), NewFile{Filename: "cases.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("cases", anaHeader, cells)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range f.Tables[0].Columns {
		if c.Type != anaTypes[anaHeader[i]] {
			t.Fatalf("column %s typed %s, want %s", c.Key, c.Type, anaTypes[anaHeader[i]])
		}
	}
	var lrows [][]string
	for code, l := range anaLookup {
		lrows = append(lrows, []string{code, l[0].(string), strconv.FormatInt(l[1].(int64), 10)})
	}
	sort.Slice(lrows, func(i, j int) bool { return lrows[i][0] < lrows[j][0] })
	lf, err := s.AddFile(context.Background(), NewFile{Filename: "countries.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("countries", []string{"code", "continent", "pop"}, lrows)}})
	if err != nil {
		t.Fatal(err)
	}
	return f, lf
}

// checkAnalysis compares the engine's answer to a with the oracle's, and
// returns how many rows it has.
func checkAnalysis(t *testing.T, s *Store, rows []anaRow, a catalog.Analysis, n int) int {
	t.Helper()
	aj, _ := json.Marshal(a)
	p, err := s.PlanAnalysis(context.Background(), a)
	if err != nil {
		t.Fatalf("analysis %d %s: plan: %v", n, aj, err)
	}
	got, err := s.Analyze(context.Background(), p)
	if err != nil {
		t.Fatalf("analysis %d %s: %v", n, aj, err)
	}
	want := analyzeOracle(rows, p)
	fail := func(what string, g, w any) {
		t.Errorf("analysis %d %s\nsql %s\n%s: got %v, want %v", n, aj, got.SQL, what, g, w)
	}
	if got.MatchedRowCount != want.matched {
		fail("matched", got.MatchedRowCount, want.matched)
		return 0
	}
	if got.Tied != want.tied {
		fail("tied", got.Tied, want.tied)
		return 0
	}
	if p.Grouped() && (*got.GroupCount != want.groups || got.EmptyGroups != want.empty) {
		fail("groups, empty", fmt.Sprint(*got.GroupCount, got.EmptyGroups), fmt.Sprint(want.groups, want.empty))
		return 0
	}
	if len(got.Rows) != len(want.rows) {
		fail("row count", len(got.Rows), len(want.rows))
		return 0
	}
	for i := range want.rows {
		for j := range want.rows[i] {
			if !sameAnalysisValue(got.Rows[i][j], want.rows[i][j]) {
				fail(fmt.Sprintf("row %d %s", i, p.OutNames()[j]), got.Rows[i], want.rows[i])
				return 0
			}
		}
	}
	if p.Grouped() && (got.HasMore == nil || *got.HasMore != (int64(p.Offset+len(got.Rows)) < want.groups)) {
		fail("has_more", got.HasMore, int64(p.Offset+len(got.Rows)) < want.groups)
	}
	return len(got.Rows)
}

// TestAnalysisOracle answers 1,200 random analyses with the engine and in
// Go, and requires the same counts, groups, order and values.
func TestAnalysisOracle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 5))
	rows, cells := genAnalysisRows(2500, rng)
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	f, lf := loadAnalysisTables(t, s, cells)
	g := &anaGen{rng: rng, lookup: lf.ID}
	covered := map[string]int{}
	for n := range 1200 {
		a := g.analysis()
		a.FileID = f.ID
		for k := range capabilities(a) {
			covered[k]++
		}
		if rows := checkAnalysis(t, s, rows, a, n); rows > 0 {
			covered["answers with rows"]++
		}
		if t.Failed() {
			return
		}
	}
	// Every capability is asked for, many times: every op and bucket of
	// the catalog's table, so a new op is tested here once it is there.
	want := []string{"filter group", "nested filter group", "expr", "having", "top", "lookup", "sort_by", "offset", "answers with rows",
		"ties cut", "windows all", "windows filtered"}
	want = append(want, catalog.MeasureOps...)
	want = append(want, catalog.FilterOps...)
	for _, b := range catalog.Buckets {
		want = append(want, "bucket "+b)
	}
	for _, k := range want {
		if covered[k] < 10 {
			t.Errorf("%s: asked %d times, want at least 10", k, covered[k])
		}
	}
	t.Logf("coverage: %v", covered)
}

// capabilities names what an analysis asks for.
func capabilities(a catalog.Analysis) map[string]bool {
	out := map[string]bool{}
	var walk func(ns []catalog.FilterNode, depth int)
	walk = func(ns []catalog.FilterNode, depth int) {
		for _, n := range ns {
			switch {
			case n.Any != nil || n.All != nil:
				out["filter group"] = true
				if depth > 0 {
					out["nested filter group"] = true
				}
				walk(append(n.Any, n.All...), depth+1)
			default:
				out[n.Op] = true
			}
		}
	}
	walk(a.Filters, 0)
	for _, g := range a.GroupBy {
		if g.Bucket != "" {
			out["bucket "+g.Bucket] = true
		}
	}
	for _, m := range a.Measures {
		if m.Expr != "" {
			out["expr"] = true
		} else {
			out[m.Op] = true
		}
	}
	for k, ok := range map[string]bool{"having": len(a.Having) > 0, "top": a.Top != nil, "lookup": a.Lookup != nil,
		"sort_by": a.SortBy != "", "offset": a.Offset > 0, "ties cut": a.Top != nil && a.Top.Ties == "cut",
		"windows all": a.Windows == catalog.WindowsAll, "windows filtered": a.Windows == catalog.WindowsFiltered} {
		if ok {
			out[k] = true
		}
	}
	return out
}
