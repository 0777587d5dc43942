package web

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"datadesk/engine"
	"datadesk/engine/catalog"
)

// rangeBins is how many equal ranges a number column's summary shows.
const rangeBins = 5

// ranges adds to a summary the facets of a number column's range (five
// equal ranges from its smallest to its largest value, each counted) or
// of a date column's years (its months when all fall in one year), each
// a link that adds the range to the filters.
func (sum *columnSummary) ranges(ctx context.Context, store *engine.Store, t *catalog.Table, v *tableView, q url.Values) error {
	col, ok := t.Lookup(sum.Key)
	if !ok || sum.min == nil || sum.max == nil {
		return nil
	}
	count := func(extra ...catalog.Filter) (int64, error) {
		query := v.query(t.ID)
		query.SortBy, query.Direction = "", ""
		query.Filters = append(append([]catalog.Filter(nil), query.Filters...), extra...)
		p, err := store.Plan(ctx, query)
		if err != nil {
			return 0, err
		}
		res, err := store.Run(ctx, p)
		if err != nil {
			return 0, err
		}
		return res.MatchedRowCount, nil
	}
	add := func(label string, n int64, conds [][2]string) {
		u := copyAddress(q, "offset", "summary", noteParam, noteSigParam)
		for _, c := range conds {
			addCondition(u, col.Key, c[0], c[1])
		}
		sum.Ranges = append(sum.Ranges, topValue{Value: pageCell{Text: label, Class: "text"}, Count: n, URL: "/tables/" + t.ID + "?" + u.Encode() + "&summary=" + url.QueryEscape(col.Key)})
	}

	switch {
	case catalog.Numeric(col.Type):
		lo, okLo := floatOf(sum.min)
		hi, okHi := floatOf(sum.max)
		if !okLo || !okHi || hi <= lo {
			return nil
		}
		sum.RangesName = "Ranges"
		step := (hi - lo) / rangeBins
		type bin struct {
			label   string
			conds   [][2]string
			filters []catalog.Filter
		}
		bins := make([]bin, rangeBins)
		for i := range bins {
			as, bs := num(lo+step*float64(i)), num(lo+step*float64(i+1))
			if i == 0 {
				as = exact(lo)
			}
			b := bin{label: as + " to under " + bs, conds: [][2]string{{"gte", as}, {"lt", bs}},
				filters: []catalog.Filter{{Column: col.Key, Op: "gte", Value: as}, {Column: col.Key, Op: "lt", Value: bs}}}
			if i == rangeBins-1 {
				bs = exact(hi)
				b.label, b.conds[1] = as+" to "+bs, [2]string{"lte", bs}
				b.filters[1] = catalog.Filter{Column: col.Key, Op: "lte", Value: bs}
			}
			bins[i] = b
		}
		// The counts run at once: each scans the column alone.
		counts := make([]int64, len(bins))
		errs := make([]error, len(bins))
		var wg sync.WaitGroup
		for i, b := range bins {
			wg.Go(func() { counts[i], errs[i] = count(b.filters...) })
		}
		wg.Wait()
		for i, b := range bins {
			if errs[i] != nil {
				return errs[i]
			}
			add(b.label, counts[i], b.conds)
		}
	case col.Type == "date":
		first, err1 := time.Parse("2006-01-02", fmt.Sprint(sum.min))
		last, err2 := time.Parse("2006-01-02", fmt.Sprint(sum.max))
		if err1 != nil || err2 != nil {
			return nil
		}
		type span struct{ from, to time.Time }
		var spans []span
		if first.Year() == last.Year() {
			sum.RangesName = "Months"
			for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(last); m = m.AddDate(0, 1, 0) {
				spans = append(spans, span{m, m.AddDate(0, 1, -1)})
			}
		} else {
			sum.RangesName = "Years"
			for y := first.Year(); y <= last.Year() && len(spans) < 50; y++ {
				spans = append(spans, span{time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC)})
			}
		}
		for _, sp := range spans {
			from, to := sp.from.Format("2006-01-02"), sp.to.Format("2006-01-02")
			n, err := count(catalog.Filter{Column: col.Key, Op: "between", Value: []any{from, to}})
			if err != nil {
				return err
			}
			label := sp.from.Format("2006")
			if sum.RangesName == "Months" {
				label = sp.from.Format("2006-01")
			}
			add(label, n, [][2]string{{"gte", from}, {"lte", to}})
		}
	}
	return nil
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
