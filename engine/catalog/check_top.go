package catalog

import "fmt"

func (c *checker) top() error {
	t := c.p.Analysis.Top
	if t == nil {
		return nil
	}
	if !c.p.Grouped() {
		return qerr("top", "top keeps the first groups; it needs group_by")
	}
	if t.N < 1 || t.N > MaxTopN {
		return qerr("top.n", "n must be from 1 to %d", MaxTopN)
	}
	if len(t.Per) == 0 || len(t.Per) >= len(c.p.Groups) {
		return qerr("top.per", "per names some but not all of the group columns: the first n of the others are kept for each of their values")
	}
	tt := &TopTerm{N: t.N, By: -1}
	switch t.Ties {
	case "", "keep":
	case "cut":
		tt.Cut = true
	default:
		return qerr("top.ties", "ties must be keep (every group tied with the n-th is kept) or cut (n groups exactly)").WithAllowed(TiesOptions...)
	}
	for i, name := range t.Per {
		g, err := c.groupIndex(fmt.Sprintf("top.per[%d]", i), name)
		if err != nil {
			return err
		}
		tt.Per = append(tt.Per, g)
	}
	by := t.By
	if by == "" {
		by = c.p.Analysis.SortBy
	}
	m, err := c.measureIndex("top.by", by)
	if err != nil {
		return qerr("top.by", "top.by names the measure the groups are ranked by (or sort_by names a measure)")
	}
	tt.By = m
	switch t.Direction {
	case "", "desc":
		tt.Desc = true
	case "asc":
	default:
		return qerr("top.direction", "direction must be asc or desc").WithAllowed("asc", "desc")
	}
	c.p.Top = tt
	return nil
}
