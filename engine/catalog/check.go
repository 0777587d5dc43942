package catalog

// The checker of files.analyze_table: AnalysisFor checks the arguments
// clause by clause (check_*.go), each clause seeing the ones before, into
// an AnalysisPlan.

import "strings"

// AnalysisFor checks a against table t and, for a lookup, table lt.
// Errors: invalid, naming the argument and what is allowed.
func AnalysisFor(t, lt *Table, a Analysis) (*AnalysisPlan, error) {
	p := &AnalysisPlan{Table: t, Analysis: a, Limit: a.Limit, Offset: a.Offset, Series: -1}
	if a.Limit < 0 || a.Limit > MaxAnalysisPage {
		return nil, qerr("limit", "limit must be from 1 to %d (0: %d)", MaxAnalysisPage, DefaultAnalysisPage)
	}
	if a.Limit == 0 {
		p.Limit = DefaultAnalysisPage
	}
	if a.Offset < 0 || a.Offset > MaxQueryOffset {
		return nil, qerr("offset", "offset must be from 0 to %d", MaxQueryOffset)
	}
	c := &checker{p: p, used: map[string]bool{}}
	if err := c.lookup(lt); err != nil {
		return nil, err
	}
	var err error
	if p.Where, err = c.filters(a.Filters); err != nil {
		return nil, err
	}
	if err := c.groups(); err != nil {
		return nil, err
	}
	if err := c.measures(); err != nil {
		return nil, err
	}
	if err := c.windows(); err != nil {
		return nil, err
	}
	if err := c.having(); err != nil {
		return nil, err
	}
	if err := c.top(); err != nil {
		return nil, err
	}
	if err := c.sort(); err != nil {
		return nil, err
	}
	if p.Lookup != nil {
		for _, col := range lt.Columns {
			if c.used[LookupPrefix+col.Key] {
				p.Lookup.Cols = append(p.Lookup.Cols, col)
			}
		}
	}
	return p, nil
}

// checker checks an analysis's parts in order, each seeing the ones
// before.
type checker struct {
	p *AnalysisPlan
	// names maps each output name, lower case, to the argument that named
	// it.
	names map[string]string
	// used are the lookup columns the analysis reads.
	used  map[string]bool
	conds int
}

// column resolves a column key of the table, or of the lookup table as
// lookup.key.
func (c *checker) column(field, key string) (*Column, error) {
	if k, ok := strings.CutPrefix(key, LookupPrefix); ok && c.p.Lookup != nil {
		lc, err := c.p.Lookup.Table.resolve(field, k)
		if err != nil {
			return nil, err
		}
		col := *lc
		col.Key = LookupPrefix + lc.Key
		c.used[col.Key] = true
		return &col, nil
	}
	col, err := c.p.Table.resolve(field, key)
	if err != nil && c.p.Lookup != nil {
		keys := c.p.Table.Keys()
		for _, k := range c.p.Lookup.Table.Keys() {
			keys = append(keys, LookupPrefix+k)
		}
		return nil, qerr(field, "unknown column %q; valid keys: %s", key, strings.Join(keys, ", ")).WithAllowed(keys...)
	}
	return col, err
}

// name records an output name, unique case-insensitively.
func (c *checker) name(field, name string) error {
	if c.names == nil {
		c.names = map[string]string{}
	}
	if prev, dup := c.names[strings.ToLower(name)]; dup {
		return qerr(field, "name %q is already used by %s; give each a unique name", name, prev)
	}
	c.names[strings.ToLower(name)] = field
	return nil
}
