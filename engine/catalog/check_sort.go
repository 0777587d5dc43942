package catalog

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
	first := -1
	if a.SortBy != "" {
		names := c.p.OutNames()
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
	for i := range c.p.Groups {
		if i != first {
			c.p.Sort = append(c.p.Sort, SortTerm{Out: i})
		}
	}
	return nil
}
