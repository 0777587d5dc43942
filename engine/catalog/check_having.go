package catalog

import (
	"fmt"
	"slices"
)

func (c *checker) having() error {
	hs := c.p.Analysis.Having
	if len(hs) == 0 {
		return nil
	}
	if !c.p.Grouped() {
		return qerr("having", "having keeps groups; it needs group_by (filters keep rows)")
	}
	if len(hs) > MaxHaving {
		return qerr("having", "at most %d having conditions are allowed", MaxHaving)
	}
	for i, h := range hs {
		field := fmt.Sprintf("having[%d]", i)
		m, err := c.measureIndex(field+".measure", h.Measure)
		if err != nil {
			return err
		}
		col := &Column{Key: h.Measure, Type: c.p.Measures[m].Type}
		if !slices.Contains(HavingOps, h.Op) {
			return qerr(field+".op", "unknown op %q", h.Op).WithAllowed(HavingOps...)
		}
		cond, err := checkAnalysisFilter(field, col, FilterNode{Column: h.Measure, Op: h.Op, Value: h.Value})
		if err != nil {
			return err
		}
		if cond.AsNumber {
			return qerr(field+".value", "%s is text (%s of a text column, in text order, where \"9\" comes after \"10\"); %s with a number compares numbers. "+
				"Compare it with a text value, or measure a numeric column", h.Measure, c.p.Measures[m].Op, h.Op)
		}
		c.p.Having = append(c.p.Having, HavingCond{Measure: m, Op: cond.Op, Values: cond.Values, Null: cond.Null})
	}
	return nil
}
