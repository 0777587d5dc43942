package catalog

import "fmt"

func (c *checker) lookup(lt *Table) error {
	l := c.p.Analysis.Lookup
	if l == nil {
		return nil
	}
	if lt == nil {
		return qerr("lookup.file_id", "the lookup table is missing")
	}
	if len(l.On) == 0 || len(l.On) > MaxJoinKeys {
		return qerr("lookup.on", "lookup.on pairs 1 to %d columns", MaxJoinKeys)
	}
	lp := &LookupPlan{Table: lt}
	for i, j := range l.On {
		field := fmt.Sprintf("lookup.on[%d]", i)
		col, err := c.p.Table.resolve(field+".column", j.Column)
		if err != nil {
			return err
		}
		lcol, err := lt.resolve(field+".lookup_column", j.LookupColumn)
		if err != nil {
			return err
		}
		if col.Type != lcol.Type && !(Numeric(col.Type) && Numeric(lcol.Type)) {
			return qerr(field, "%q is %s and lookup column %q is %s; keys compare only when both are text, numbers, dates or timestamps",
				col.Key, col.Type, lcol.Key, lcol.Type)
		}
		lp.On = append(lp.On, JoinKey{Col: *col, Lookup: *lcol})
	}
	c.p.Lookup = lp
	return nil
}
