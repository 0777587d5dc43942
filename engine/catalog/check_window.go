package catalog

import "fmt"

func (c *checker) windowBody(field string, t *MeasureTerm, m Measure) error {
	if t.Col != nil {
		return qerr(field+".column", "%s follows another measure: name it with of", t.Op)
	}
	if !c.p.Grouped() {
		return qerr(field+".op", "%s is computed over groups; it needs group_by", t.Op)
	}
	if t.Op != "rank" && c.p.Series < 0 {
		return qerr(field+".op", "%s follows a series: group_by needs a date or timestamp column with a bucket, or a whole-number column such as a year", t.Op)
	}
	of := -1
	for j, o := range c.p.Measures {
		if o.Name == m.Of && !o.Window() {
			of = j
		}
	}
	if of < 0 {
		return qerr(field+".of", "of names the measure %s follows, one of the other measures", t.Op)
	}
	t.Of = of
	for i, w := range m.Within {
		found := false
		for j, g := range c.p.Groups {
			if g.Name == w {
				t.Within, found = append(t.Within, j), true
			}
		}
		if !found {
			return qerr(fmt.Sprintf("%s.within[%d]", field, i), "within names group columns; %q is none", w)
		}
	}
	if len(m.Within) > 0 && t.Op != "rank" {
		return qerr(field+".within", "within applies to rank; %s follows each series of the other groups", t.Op)
	}
	switch m.Direction {
	case "", "desc":
		t.Desc = true
	case "asc":
	default:
		return qerr(field+".direction", "direction must be asc or desc").WithAllowed("asc", "desc")
	}
	return nil
}

// windows checks the scope of the measures over the groups. With "all",
// the top-level filters on the series column are held back from the rows
// and kept for the buckets once the measures over them are computed.
func (c *checker) windows() error {
	p := c.p
	switch p.Analysis.Windows {
	case "", WindowsFiltered:
		return nil
	case WindowsAll:
	default:
		return qerr("windows", "windows must be filtered or all").WithAllowed(WindowsFiltered, WindowsAll)
	}
	over := false
	for _, m := range p.Measures {
		over = over || m.Window() || m.OfTotal()
	}
	if !over || p.Series < 0 {
		return qerr("windows", "windows: all applies to %s over a series "+
			"(group_by a date or timestamp column with a bucket, or a whole-number column such as a year)",
			opsWhere(func(o MeasureOp) bool { return o.OverGroups || o.OfTotal }))
	}
	if p.Where == nil {
		return nil
	}
	series := p.Groups[p.Series]
	var kept []Cond
	for _, cond := range p.Where.Conds {
		if cond.Col.Key == series.Col.Key {
			p.SeriesWhere = append(p.SeriesWhere, cond)
		} else {
			kept = append(kept, cond)
		}
	}
	p.Where.Conds = kept
	if len(kept) == 0 && len(p.Where.Kids) == 0 {
		p.Where = nil
	}
	return nil
}
