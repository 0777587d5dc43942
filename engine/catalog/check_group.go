package catalog

import (
	"fmt"
	"strings"

	"datadesk/engine/typing"
)

func (c *checker) groups() error {
	a := c.p.Analysis
	if len(a.GroupBy) > MaxAnalysisGroups {
		return qerr("group_by", "at most %d group_by entries are allowed", MaxAnalysisGroups)
	}
	for i, g := range a.GroupBy {
		field := fmt.Sprintf("group_by[%d]", i)
		col, err := c.column(field, g.Column)
		if err != nil {
			return err
		}
		gt := GroupTerm{Col: *col, Bucket: g.Bucket, Name: strings.ReplaceAll(col.Key, ".", "_")}
		if g.Bucket != "" {
			ok := false
			for _, b := range Buckets {
				ok = ok || b == g.Bucket
			}
			switch {
			case !ok:
				return qerr(field+".bucket", "unknown bucket %q", g.Bucket).WithAllowed(Buckets...)
			case col.Type != typing.TypeDate && col.Type != typing.TypeTimestamp:
				return qerr(field+".bucket", "buckets apply to date and timestamp columns; %q is %s", col.Key, col.Type)
			case col.Type == typing.TypeDate && g.Bucket == "hour":
				return qerr(field+".bucket", "%q is a date; hours apply to timestamps", col.Key)
			}
			gt.Name += "_" + g.Bucket
		}
		if err := c.name(field, gt.Name); err != nil {
			return err
		}
		c.p.Groups = append(c.p.Groups, gt)
	}
	c.p.Series = seriesOf(c.p.Groups)
	return nil
}

// seriesOf is the group change, pct_change and running_total follow:
// the first time bucket, or else the last group of a whole-number column
// (a year, as annual series are grouped: ["country", "year"]), in its
// numeric order; -1 if none.
func seriesOf(groups []GroupTerm) int {
	whole := -1
	for i, g := range groups {
		if g.Bucket != "" {
			return i
		}
		if g.Col.Type == typing.TypeInteger {
			whole = i
		}
	}
	return whole
}

func (c *checker) groupIndex(field, name string) (int, error) {
	name = outName(name)
	var names []string
	for i, g := range c.p.Groups {
		if g.Name == name {
			return i, nil
		}
		names = append(names, g.Name)
	}
	return 0, qerr(field, "%q is not a group column", name).WithAllowed(names...)
}
