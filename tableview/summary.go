package tableview

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
)

// Summary limits: the most frequent values a summary lists, and the equal
// ranges of a number column's values.
const (
	SummaryTop = 10
	rangeBins  = 5
)

// Summary describes one column of the rows a view matches, as datasette's
// facets do: each of its values (or ranges) with its rows, and the
// condition that keeps them.
type Summary struct {
	Column   string `json:"column"`
	Rows     int64  `json:"rows"`
	Nulls    int64  `json:"nulls"`
	Distinct int64  `json:"distinct"`
	// Min and Max are the column's first and last value in its order.
	Min any `json:"min"`
	Max any `json:"max"`
	// Top are the most frequent values, the most first.
	Top []Facet `json:"top"`
	// Ranges are a number column's five equal ranges from its smallest to
	// its largest value, or a date column's years (its months when all
	// fall in one year); RangesName says which.
	Ranges     []Facet `json:"ranges,omitempty"`
	RangesName string  `json:"ranges_name,omitempty"`
}

// Facet is one value or range of a summary: its label, its rows, and the
// conditions that keep them (added to a view's, its link).
type Facet struct {
	Value any    `json:"value"`
	Label string `json:"label,omitempty"`
	Count int64  `json:"count"`
	Conds []Cond `json:"-"`
}

// Summarize counts each column the view summarises, over the rows its
// conditions and search keep. Errors: the plans'.
func (v *View) Summarize(ctx context.Context, store *engine.Store) ([]*Summary, error) {
	out := make([]*Summary, len(v.Summaries))
	errs := make([]error, len(v.Summaries))
	var wg sync.WaitGroup
	for i, key := range v.Summaries {
		wg.Go(func() { out[i], errs[i] = v.summarize(ctx, store, key) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// summarize counts a column's values through files.query_table's plans:
// rows and non-empty values, the groups of its values (how many, and the
// most frequent), and its first and last value in sort order; then its
// ranges.
func (v *View) summarize(ctx context.Context, store *engine.Store, key string) (*Summary, error) {
	col, ok := v.Table.Lookup(key)
	if !ok {
		return nil, datadesk.Errorf(datadesk.Invalid, "no column %q to summarise", key).WithField("summary")
	}
	// The groups and the counts read the table apart: they run at once.
	// The groups give the column's first and last value in its order
	// too (a plan's Bounds): a second read of the column for them took as
	// long as the groups.
	queries := summaryQueries(v.Query(), &col)
	results := make([]*catalog.QueryResult, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() {
			p, err := store.Plan(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			p.Bounds = i == 0
			results[i], errs[i] = store.Run(ctx, p)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res, counts := results[0], results[1]
	rows := int64Of(counts.Aggregates["rows"])
	sum := &Summary{Column: col.Key, Rows: rows, Nulls: rows - int64Of(counts.Aggregates["values"]), Min: res.First, Max: res.Last}
	if res.GroupCount != nil {
		sum.Distinct = *res.GroupCount
	}
	for _, r := range res.Rows {
		c := Cond{Op: "is_blank"}
		if s, isText := r[0].(string); r[0] != nil && (!isText || s != "") {
			c = Cond{Op: "eq", Value: fmt.Sprint(r[0])}
		}
		sum.Top = append(sum.Top, Facet{Value: r[0], Count: int64Of(r[1]), Conds: []Cond{c}})
	}
	return sum, sum.ranges(ctx, store, v, col)
}

// summaryQueries are the plans of a column's summary over the view's
// query: its values' groups, the most frequent first (whose plan, asked
// for its Bounds, gives the first and last value too), and the counts
// of rows and values.
func summaryQueries(base catalog.Query, col *catalog.Column) []catalog.Query {
	base.SortBy, base.Direction, base.Columns = "", "", nil
	present := base
	present.Filters = append(append([]catalog.Filter(nil), base.Filters...), catalog.Filter{Column: col.Key, Op: "is_null", Value: false})
	countName := "count"
	if strings.EqualFold(col.Key, countName) {
		countName = "count_of_rows"
	}
	counts := base
	counts.Aggregates = []catalog.Aggregate{{Op: "count", Name: "rows"}, {Op: "count", Column: col.Key, Name: "values"}}
	groups := present
	groups.GroupBy, groups.Aggregates = []string{col.Key}, []catalog.Aggregate{{Op: "count", Name: countName}}
	groups.SortBy, groups.Direction, groups.Limit = countName, "desc", SummaryTop
	return []catalog.Query{groups, counts}
}

// ranges adds a number column's equal ranges or a date column's years
// (months within one year), each counted.
func (sum *Summary) ranges(ctx context.Context, store *engine.Store, v *View, col catalog.Column) error {
	if sum.Min == nil || sum.Max == nil {
		return nil
	}
	var bins []Facet
	switch {
	case catalog.Numeric(col.Type):
		sum.RangesName, bins = "Ranges", numberBins(sum.Min, sum.Max)
	case col.Type == "date":
		sum.RangesName, bins = dateBins(sum.Min, sum.Max)
	}
	// The counts run at once: each scans the column alone.
	errs := make([]error, len(bins))
	var wg sync.WaitGroup
	for i := range bins {
		wg.Go(func() { bins[i].Count, errs[i] = v.count(ctx, store, col, bins[i].Conds) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	sum.Ranges = bins
	return nil
}

// count counts the view's rows that also meet conds on col.
func (v *View) count(ctx context.Context, store *engine.Store, col catalog.Column, conds []Cond) (int64, error) {
	q := v.Query()
	q.SortBy, q.Direction, q.Columns = "", "", nil
	q.Filters = append([]catalog.Filter(nil), q.Filters...)
	for _, c := range conds {
		q.Filters = append(q.Filters, filterOf(col, c))
	}
	p, err := store.Plan(ctx, q)
	if err != nil {
		return 0, err
	}
	res, err := store.Run(ctx, p)
	if err != nil {
		return 0, err
	}
	return res.MatchedRowCount, nil
}

// numberBins are five equal ranges from lo to hi, each at least its
// lower bound and under the next (the last up to hi, included).
func numberBins(loV, hiV any) []Facet {
	lo, okLo := floatOf(loV)
	hi, okHi := floatOf(hiV)
	if !okLo || !okHi || hi <= lo {
		return nil
	}
	step := (hi - lo) / rangeBins
	bins := make([]Facet, rangeBins)
	for i := range bins {
		from, to := num(lo+step*float64(i)), num(lo+step*float64(i+1))
		if i == 0 {
			from = exact(lo)
		}
		b := Facet{Label: from + " to under " + to, Conds: []Cond{{Op: "gte", Value: from}, {Op: "lt", Value: to}}}
		if i == rangeBins-1 {
			to = exact(hi)
			b.Label, b.Conds[1] = from+" to "+to, Cond{Op: "lte", Value: to}
		}
		b.Value = b.Label
		bins[i] = b
	}
	return bins
}

// dateBins are the years from first to last (at most 50), or the months
// when both fall in one year.
func dateBins(firstV, lastV any) (string, []Facet) {
	first, err1 := time.Parse("2006-01-02", fmt.Sprint(firstV))
	last, err2 := time.Parse("2006-01-02", fmt.Sprint(lastV))
	if err1 != nil || err2 != nil {
		return "", nil
	}
	bin := func(from, to time.Time, label string) Facet {
		return Facet{Value: label, Label: label, Conds: []Cond{{Op: "gte", Value: from.Format("2006-01-02")}, {Op: "lte", Value: to.Format("2006-01-02")}}}
	}
	var bins []Facet
	if first.Year() == last.Year() {
		for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(last); m = m.AddDate(0, 1, 0) {
			bins = append(bins, bin(m, m.AddDate(0, 1, -1), m.Format("2006-01")))
		}
		return "Months", bins
	}
	for y := first.Year(); y <= last.Year() && len(bins) < 50; y++ {
		from := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		bins = append(bins, bin(from, from.AddDate(1, 0, -1), from.Format("2006")))
	}
	return "Years", bins
}

func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case interface{ Float64() (float64, error) }:
		f, err := x.Float64()
		return f, err == nil
	}
	f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	return f, err == nil
}

// num writes a range's bound with at most six significant digits, without
// an exponent.
func num(f float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// exact writes a bound as it is.
func exact(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func int64Of(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	}
	return 0
}
