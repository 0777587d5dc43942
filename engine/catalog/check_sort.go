package catalog

// sort orders the result: sort_by first, when given; then, with top,
// each combination of top's per groups together, its groups by rank
// (top's measure and direction); then the group columns, which are
// unique per group.
func (c *checker) sort() error {
	a := c.p.Analysis
	desc := false
	switch a.Direction {
	case "", "asc":
	case "desc":
		desc = true
	default:
		return qerr("direction", "direction must be asc or desc").WithAllowed("asc", "desc")
	}
	if a.SortBy != "" {
		names := c.p.OutNames()
		first := -1
		for i, n := range names {
			if n == outName(a.SortBy) {
				first = i
			}
		}
		if first < 0 {
			return qerr("sort_by", "sort_by %q is neither a group nor a measure", a.SortBy).WithAllowed(names...)
		}
		c.p.Sort = append(c.p.Sort, SortTerm{Out: first, Desc: desc})
	}
	if t := c.p.Top; t != nil {
		for _, g := range t.Per {
			c.orderBy(SortTerm{Out: g})
		}
		c.orderBy(SortTerm{Out: len(c.p.Groups) + t.By, Desc: t.Desc})
	}
	for i := range c.p.Groups {
		c.orderBy(SortTerm{Out: i})
	}
	return nil
}

// orderBy adds s to the sort unless its column already orders it.
func (c *checker) orderBy(s SortTerm) {
	for _, o := range c.p.Sort {
		if o.Out == s.Out {
			return
		}
	}
	c.p.Sort = append(c.p.Sort, s)
}
