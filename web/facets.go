package web

import (
	"slices"

	"datadesk/engine/catalog"
	"datadesk/tableview"
)

// pageSummary is a column's summary as the page shows it, one of several
// side by side: its counts, its bounds, and its most frequent values and
// ranges, each a facet that adds its condition to the view's.
type pageSummary struct {
	Key, Label, Class     string
	Rows, Distinct, Nulls string
	Min, Max              pageCell
	Top, Ranges           []pageFacet
	RangesName            string
	// CloseURL is the view without this summary.
	CloseURL string
}

// pageFacet is one value or range of a summary, with its rows and the
// address of the view that keeps only them.
type pageFacet struct {
	Value pageCell
	Count string
	URL   string
}

// summariesOf lays out the view's summaries, each facet a link to the
// view with its condition added, the summaries kept.
func summariesOf(v *tableview.View, sums []*tableview.Summary) []*pageSummary {
	here := "/tables/" + v.Table.ID
	out := make([]*pageSummary, len(sums))
	for i, s := range sums {
		col, _ := v.Table.Lookup(s.Column)
		class := viewOfColumn(&col)
		ps := &pageSummary{Key: col.Key, Label: labelOf(col), Class: class, Rows: grouped(s.Rows), Distinct: grouped(s.Distinct), Nulls: grouped(s.Nulls),
			Min: boundCell(s.Min, class), Max: boundCell(s.Max, class), RangesName: s.RangesName}
		facet := func(f tableview.Facet, cell pageCell) pageFacet {
			w := v.Clone()
			w.Offset, w.Message = 0, ""
			for _, c := range f.Conds {
				w.AddCond(col.Key, c)
			}
			return pageFacet{Value: cell, Count: grouped(f.Count), URL: w.Href(here)}
		}
		for _, f := range s.Top {
			ps.Top = append(ps.Top, facet(f, cellOf(f.Value, class)))
		}
		for _, f := range s.Ranges {
			ps.Ranges = append(ps.Ranges, facet(f, pageCell{Text: f.Label, Class: "text"}))
		}
		w := v.Clone()
		w.Message = ""
		w.Summaries = slices.DeleteFunc(w.Summaries, func(k string) bool { return k == col.Key })
		ps.CloseURL = w.Href(here)
		out[i] = ps
	}
	return out
}

// boundCell shows a summary's first or last value; none when the column
// has no values.
func boundCell(raw any, class string) pageCell {
	if raw == nil {
		return pageCell{Text: "∅", Class: "null", Title: "no values"}
	}
	return cellOf(raw, class)
}

func viewOfColumn(c *catalog.Column) string {
	if catalog.Numeric(c.Type) {
		return "num"
	}
	return "text"
}
