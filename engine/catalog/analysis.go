package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine/typing"
)

// Limits of files.analyze_table, as its schema states them.
const (
	MaxAnalysisGroups   = 4
	MaxMeasures         = 16
	MaxAnalysisConds    = 50
	MaxHaving           = 10
	MaxAnalysisPage     = 50
	DefaultAnalysisPage = 20
	MaxTopN             = 100
	MaxJoinKeys         = 3
)

// MaxCompiledSQL bounds the statement an analysis compiles to. Each
// computed measure is a stage of its own, naming earlier measures as
// columns, so a statement grows with the arguments, never with how often
// measures name each other: the limits above allow about 23 KB. The bound
// keeps it so whatever the compilers become.
const MaxCompiledSQL = 256 << 10

// CheckCompiled refuses a compiled statement past MaxCompiledSQL.
// Errors: invalid.
func CheckCompiled(q string) error {
	if len(q) > MaxCompiledSQL {
		return datadesk.Errorf(datadesk.Invalid, "these measures and filters compile to a statement of %d bytes, more than the %d allowed: "+
			"use fewer or shorter computed measures", len(q), MaxCompiledSQL).WithField("measures")
	}
	return nil
}

// Buckets are the time buckets a date or timestamp column groups by.
var Buckets = []string{"year", "quarter", "month", "week", "day", "hour"}

// Analysis is a files.analyze_table call's arguments, already checked
// against the tool's schema. Values are nil, bool, json.Number, string or
// []any of those.
type Analysis struct {
	FileID    string       `json:"file_id"`
	Filters   []FilterNode `json:"filters,omitempty"`
	GroupBy   []GroupBy    `json:"group_by,omitempty"`
	Measures  []Measure    `json:"measures,omitempty"`
	Having    []Having     `json:"having,omitempty"`
	Top       *Top         `json:"top,omitempty"`
	Lookup    *Lookup      `json:"lookup,omitempty"`
	SortBy    string       `json:"sort_by,omitempty"`
	Direction string       `json:"direction,omitempty"`
	Limit     int          `json:"limit,omitempty"`
	Offset    int          `json:"offset,omitempty"`
	Show      bool         `json:"show,omitempty"`
	// Windows is what the measures over the groups run over: "filtered"
	// (the default), the groups of the filtered rows; or "all", every
	// bucket of the series, with the filters on the series column kept
	// for the buckets shown.
	Windows string `json:"windows,omitempty"`
}

// Window scopes: what change, pct_change, running_total, rank and share
// run over.
const (
	WindowsFiltered = "filtered"
	WindowsAll      = "all"
)

// FilterNode is a condition on a column (Column, Op, Value), or a group of
// nodes of which any (OR) or all (AND) must hold.
type FilterNode struct {
	Column string       `json:"column,omitempty"`
	Op     string       `json:"op,omitempty"`
	Value  any          `json:"value,omitempty"`
	Any    []FilterNode `json:"any,omitempty"`
	All    []FilterNode `json:"all,omitempty"`
}

// UnmarshalJSON reads a filter, refusing keys a filter does not have:
// the tool's schema checks the filters' first level, and a key misspelt
// deeper would otherwise be dropped unseen.
func (n *FilterNode) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err == nil {
		for k := range keys {
			switch k {
			case "column", "op", "value", "any", "all":
			default:
				return qerr("filters", "unknown key %q in a filter; a filter has column, op and value, or any or all", k).
					WithAllowed("column", "op", "value", "any", "all")
			}
		}
	}
	type plain FilterNode
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode((*plain)(n))
}

// GroupBy is a group column, with a time bucket for a date or timestamp
// column. It is written as the column's key alone, or as an object.
type GroupBy struct {
	Column string `json:"column"`
	Bucket string `json:"bucket,omitempty"`
}

// UnmarshalJSON reads "key" or {"column": "key", "bucket": "month"}.
func (g *GroupBy) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &g.Column)
	}
	type plain GroupBy
	return json.Unmarshal(b, (*plain)(g))
}

// MarshalJSON writes a group without a bucket as its key.
func (g GroupBy) MarshalJSON() ([]byte, error) {
	if g.Bucket == "" {
		return json.Marshal(g.Column)
	}
	type plain GroupBy
	return json.Marshal(plain(g))
}

// Measure is one value of each group (or of all matched rows): an
// aggregate of a column (Op, Column, P for a percentile), a computation
// over other measures (Expr), or a measure over the groups (Op change,
// pct_change, running_total or rank, Of another measure).
type Measure struct {
	Op        string   `json:"op,omitempty"`
	Column    string   `json:"column,omitempty"`
	Name      string   `json:"name,omitempty"`
	P         *float64 `json:"p,omitempty"`
	Expr      string   `json:"expr,omitempty"`
	Of        string   `json:"of,omitempty"`
	Within    []string `json:"within,omitempty"`
	Direction string   `json:"direction,omitempty"`
	// OrderBy is the column first and last follow.
	OrderBy string `json:"order_by,omitempty"`
}

// Having is a condition on a measure, applied to the groups.
type Having struct {
	Measure string `json:"measure"`
	Op      string `json:"op"`
	Value   any    `json:"value"`
}

// Top keeps the first N groups of each combination of the Per groups, by
// measure By.
type Top struct {
	N         int      `json:"n"`
	Per       []string `json:"per"`
	By        string   `json:"by,omitempty"`
	Direction string   `json:"direction,omitempty"`
	// Ties is "keep" (the default: every group tied with the n-th is
	// kept) or "cut" (n groups exactly, ties broken by the group values).
	Ties string `json:"ties,omitempty"`
}

// Lookup joins a second table of the same owner, many to one: each row
// takes the values of the lookup row whose key columns equal its own.
type Lookup struct {
	FileID string       `json:"file_id"`
	On     []LookupJoin `json:"on"`
}

// LookupJoin pairs a column of the table with one of the lookup table.
type LookupJoin struct {
	Column       string `json:"column"`
	LookupColumn string `json:"lookup_column"`
}

// LookupPrefix names the lookup table's columns in an analysis:
// "lookup.continent".
const LookupPrefix = "lookup."

// AnalysisPlan is a checked analysis in typed parts, with no SQL in it.
type AnalysisPlan struct {
	Table    *Table
	Analysis Analysis
	// Lookup, if set, is the joined table; its columns used are named
	// with LookupPrefix in Conds and groups.
	Lookup *LookupPlan
	Where  *Bool
	Groups []GroupTerm
	// Measures are in the call's order; their output follows the groups.
	Measures []MeasureTerm
	Having   []HavingCond
	Top      *TopTerm
	// Sort is the result's order, complete (every group column is in it).
	Sort []SortTerm
	// Series is the index of the time bucket group that change,
	// pct_change and running_total follow; -1 if none.
	Series int
	// SeriesWhere, with Analysis.Windows "all", are the filters on the
	// series column, held back from the rows and applied to the buckets
	// after the measures over the groups ran over every bucket.
	SeriesWhere []Cond
	Limit       int
	Offset      int
}

// LookupPlan is a checked lookup: the table, its key pairs, and its
// columns the analysis reads.
type LookupPlan struct {
	Table *Table
	On    []JoinKey
	Cols  []Column
}

// JoinKey pairs a column of the table with one of the lookup table.
type JoinKey struct {
	Col, Lookup Column
}

// Bool is conditions and groups of them, all of which hold (or, with Or,
// any of which).
type Bool struct {
	Or    bool
	Conds []Cond
	Kids  []*Bool
}

// GroupTerm is a checked group: a column, bucketed or not, and the name
// of its output column.
type GroupTerm struct {
	Col    Column
	Bucket string
	Name   string
}

// Type is the catalog type of the group's values.
func (g GroupTerm) Type() string {
	switch {
	case g.Bucket == "hour":
		return typing.TypeTimestamp
	case g.Bucket != "":
		return typing.TypeDate
	}
	return g.Col.Type
}

// MeasureTerm is a checked measure.
type MeasureTerm struct {
	Name string
	// Op is count, count_distinct, sum, avg, min, max, median,
	// percentile, stddev, share, expr, change, pct_change, running_total
	// or rank.
	Op  string
	Col *Column
	P   float64
	// Expr is an expr measure's computation.
	Expr *Expr
	// Of is the measure a measure over the groups follows.
	Of int
	// Within are the groups rank ranks within.
	Within []int
	Desc   bool
	// OrderBy is the column first and last follow.
	OrderBy *Column
	// Type is the catalog type of its values.
	Type string
}

// Window reports whether the measure is computed over the groups.
func (m MeasureTerm) Window() bool {
	switch m.Op {
	case "change", "pct_change", "running_total", "rank":
		return true
	}
	return false
}

// HavingCond is a checked condition on measure Measure.
type HavingCond struct {
	Measure int
	Op      string
	Values  []any
	Null    bool
}

// TopTerm keeps the first N groups of each combination of groups Per, by
// measure By.
type TopTerm struct {
	N    int
	Per  []int
	By   int
	Desc bool
	// Cut keeps n groups exactly; otherwise every group tied with the
	// n-th is kept too.
	Cut bool
}

// SortTerm orders by output column Out.
type SortTerm struct {
	Out  int
	Desc bool
}

// Grouped reports whether the result has one row per group.
func (p *AnalysisPlan) Grouped() bool { return len(p.Groups) > 0 }

// OutNames are the result's column names: groups, then measures.
func (p *AnalysisPlan) OutNames() []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, g.Name)
	}
	for _, m := range p.Measures {
		out = append(out, m.Name)
	}
	return out
}

// OutType is the catalog type of output column i.
func (p *AnalysisPlan) OutType(i int) string {
	if i < len(p.Groups) {
		return p.Groups[i].Type()
	}
	return p.Measures[i-len(p.Groups)].Type
}

// ExprLevels orders the computed measures in levels: each reads only
// measures of the levels before it, so each level can be one stage of a
// statement.
func (p *AnalysisPlan) ExprLevels() [][]int {
	level := map[int]int{}
	var depth func(i int) int
	depth = func(i int) int {
		if d, ok := level[i]; ok {
			return d
		}
		d := 0
		for _, r := range p.Measures[i].Expr.Refs() {
			if p.Measures[r].Op == "expr" {
				d = max(d, depth(r)+1)
			}
		}
		level[i] = d
		return d
	}
	var out [][]int
	for i, m := range p.Measures {
		if m.Op != "expr" {
			continue
		}
		d := depth(i)
		for len(out) <= d {
			out = append(out, nil)
		}
		out[d] = append(out[d], i)
	}
	return out
}

var measureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

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

// filters checks the filter tree: the top list is AND-ed, and a node's any
// or all nest up to two levels.
func (c *checker) filters(nodes []FilterNode) (*Bool, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	return c.filterList("filters", nodes, false, 0)
}

func (c *checker) filterList(field string, nodes []FilterNode, or bool, depth int) (*Bool, error) {
	b := &Bool{Or: or}
	for i, n := range nodes {
		f := fmt.Sprintf("%s[%d]", field, i)
		groups := 0
		if n.Any != nil {
			groups++
		}
		if n.All != nil {
			groups++
		}
		switch {
		case groups > 0 && (n.Column != "" || n.Op != "" || n.Value != nil):
			return nil, qerr(f, "a filter is a condition (column, op, value) or a group (any or all), not both")
		case groups == 2:
			return nil, qerr(f, "a group has any or all, not both")
		case groups == 1:
			if depth >= 2 {
				return nil, qerr(f, "groups nest at most two levels")
			}
			kids, sub, kidOr := n.All, f+".all", false
			if n.Any != nil {
				kids, sub, kidOr = n.Any, f+".any", true
			}
			if len(kids) == 0 {
				return nil, qerr(sub, "a group needs at least one filter")
			}
			k, err := c.filterList(sub, kids, kidOr, depth+1)
			if err != nil {
				return nil, err
			}
			b.Kids = append(b.Kids, k)
		default:
			if c.conds++; c.conds > MaxAnalysisConds {
				return nil, qerr(f, "at most %d conditions are allowed in all", MaxAnalysisConds)
			}
			col, err := c.column(f+".column", n.Column)
			if err != nil {
				return nil, err
			}
			cond, err := checkAnalysisFilter(f, col, n)
			if err != nil {
				return nil, err
			}
			b.Conds = append(b.Conds, cond)
		}
	}
	return b, nil
}

// FilterOps are the ops of analyze_table's filters.
var FilterOps = []string{"eq", "ne", "contains", "starts_with", "ends_with", "gt", "gte", "lt", "lte", "between", "in", "not_in", "is_null", "is_blank"}

// checkAnalysisFilter checks one condition: query_table's ops, and
// not_in, starts_with, ends_with, between and is_blank.
func checkAnalysisFilter(field string, c *Column, n FilterNode) (Cond, error) {
	cond := Cond{Col: *c, Op: n.Op}
	vfield := field + ".value"
	switch n.Op {
	case "not_in":
		in, err := checkFilter(field, c, Filter{Column: n.Column, Op: "in", Value: n.Value})
		in.Op = "not_in"
		return in, err
	case "starts_with", "ends_with":
		if n.Value == nil {
			return cond, qerr(vfield, "%s takes a value", n.Op)
		}
		if _, isList := n.Value.([]any); isList {
			return cond, qerr(vfield, "%s takes one value", n.Op)
		}
		cond.Text = ValueText(n.Value)
		return cond, nil
	case "between":
		list, ok := n.Value.([]any)
		if !ok || len(list) != 2 {
			return cond, qerr(vfield, "between takes [low, high], both included")
		}
		if c.Type == typing.TypeBoolean {
			return cond, qerr(field+".op", "between does not apply to boolean column %q", c.Key)
		}
		for i, v := range list {
			pv, err := CondValue(fmt.Sprintf("%s[%d]", vfield, i), c, v)
			if err != nil {
				return cond, err
			}
			cond.Values = append(cond.Values, pv)
		}
		return cond, nil
	case "is_blank":
		b, ok := n.Value.(bool)
		if !ok {
			return cond, qerr(vfield, "is_blank takes true (empty or only spaces) or false")
		}
		cond.Null = b
		return cond, nil
	}
	cond, err := checkFilter(field, c, Filter{Column: n.Column, Op: n.Op, Value: n.Value})
	if err != nil && strings.HasPrefix(err.Error(), "unknown op") {
		return cond, qerr(field+".op", "unknown op %q", n.Op).WithAllowed(FilterOps...)
	}
	return cond, err
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
			if c.p.Series < 0 {
				c.p.Series = i
			}
		}
		if err := c.name(field, gt.Name); err != nil {
			return err
		}
		c.p.Groups = append(c.p.Groups, gt)
	}
	return nil
}

// MeasureOps are the ops of a measure.
var MeasureOps = []string{"count", "count_distinct", "sum", "avg", "min", "max", "first", "last", "median", "percentile", "stddev", "share",
	"change", "pct_change", "running_total", "rank"}

func (c *checker) measures() error {
	a := c.p.Analysis
	ms := a.Measures
	if len(ms) > MaxMeasures {
		return qerr("measures", "at most %d measures are allowed", MaxMeasures)
	}
	if len(ms) == 0 {
		ms = []Measure{{Op: "count"}}
	}
	// Names first: an expression may use a measure named after it.
	terms := make([]MeasureTerm, len(ms))
	for i, m := range ms {
		field := fmt.Sprintf("measures[%d]", i)
		t, err := c.measureHead(field, m)
		if err != nil {
			return err
		}
		terms[i] = t
	}
	c.p.Measures = terms
	for i, m := range ms {
		if err := c.measureBody(fmt.Sprintf("measures[%d]", i), i, m); err != nil {
			return err
		}
	}
	if err := c.checkCycles(); err != nil {
		return err
	}
	for i := range c.p.Measures {
		c.p.Measures[i].Type = c.measureType(i)
	}
	return nil
}

// measureHead resolves a measure's op, column and name.
func (c *checker) measureHead(field string, m Measure) (MeasureTerm, error) {
	t := MeasureTerm{Op: m.Op, Name: m.Name, Of: -1}
	if m.Expr != "" {
		if m.Op != "" && m.Op != "expr" {
			return t, qerr(field+".op", "a measure has an op or an expr, not both")
		}
		t.Op = "expr"
		if m.Name == "" {
			return t, qerr(field+".name", "an expr measure needs a name")
		}
	}
	known := t.Op == "expr"
	for _, op := range MeasureOps {
		known = known || op == t.Op
	}
	if !known {
		return t, qerr(field+".op", "unknown measure %q", m.Op).WithAllowed(MeasureOps...)
	}
	if m.Column != "" {
		col, err := c.column(field+".column", m.Column)
		if err != nil {
			return t, err
		}
		t.Col = col
	}
	if t.Name == "" {
		t.Name = defaultMeasureName(t, m)
	} else if !measureName.MatchString(t.Name) {
		return t, qerr(field+".name", "name %q must be letters, digits and _, not starting with a digit, up to 63 characters", t.Name)
	}
	return t, c.name(field+".name", t.Name)
}

func defaultMeasureName(t MeasureTerm, m Measure) string {
	col := ""
	if t.Col != nil {
		col = "_" + strings.ReplaceAll(t.Col.Key, ".", "_")
	}
	switch t.Op {
	case "count_distinct":
		return "distinct" + col
	case "percentile":
		p := 0.0
		if m.P != nil {
			p = *m.P * 100
		}
		return "p" + strings.ReplaceAll(strconv.FormatFloat(p, 'f', -1, 64), ".", "_") + col
	case "change", "pct_change", "running_total", "rank":
		prefix := map[string]string{"change": "change_", "pct_change": "pct_change_", "running_total": "running_", "rank": "rank_"}[t.Op]
		return prefix + m.Of
	}
	return t.Op + col
}

// measureBody checks what a measure reads: its column's type, its
// expression or the measure it follows.
func (c *checker) measureBody(field string, i int, m Measure) error {
	t := &c.p.Measures[i]
	needCol := func(kinds string, ok func(typ string) bool) error {
		if t.Col == nil {
			return qerr(field+".column", "%s needs a column", t.Op)
		}
		if !ok(t.Col.Type) {
			return qerr(field+".column", "%s needs %s; %q is %s", t.Op, kinds, t.Col.Key, t.Col.typeSaid())
		}
		return nil
	}
	noCol := func() error {
		if t.Col != nil {
			return qerr(field+".column", "%s takes no column", t.Op)
		}
		return nil
	}
	if m.P != nil && t.Op != "percentile" {
		return qerr(field+".p", "p applies to percentile")
	}
	if (m.Of != "" || len(m.Within) > 0) && !t.Window() {
		return qerr(field+".of", "of and within apply to change, pct_change, running_total and rank")
	}
	if m.Direction != "" && t.Op != "rank" {
		return qerr(field+".direction", "direction applies to rank")
	}
	if m.OrderBy != "" && t.Op != "first" && t.Op != "last" {
		return qerr(field+".order_by", "order_by applies to first and last")
	}
	switch t.Op {
	case "count":
	case "count_distinct":
		return needCol("a column", func(string) bool { return true })
	case "sum", "avg", "median", "stddev":
		return needCol("a numeric column", Numeric)
	case "percentile":
		if m.P == nil || *m.P < 0 || *m.P > 1 {
			return qerr(field+".p", "percentile needs p from 0 to 1 (0.9 is the 90th percentile)")
		}
		t.P = *m.P
		return needCol("a numeric column", Numeric)
	case "min", "max":
		return needCol("a number, date, timestamp or text column", func(typ string) bool { return typ != typing.TypeBoolean })
	case "first", "last":
		return c.firstLast(field, t, m, needCol)
	case "share":
		if t.Col != nil && !Numeric(t.Col.Type) {
			return qerr(field+".column", "share of a column needs a numeric column (its sum), and %q is %s; without a column it is the share of rows", t.Col.Key, t.Col.typeSaid())
		}
	case "expr":
		if err := noCol(); err != nil {
			return err
		}
		e, err := ParseExpr(field+".expr", m.Expr, func(name string) (int, error) {
			for j, o := range c.p.Measures {
				if o.Name == name {
					if j == i {
						return 0, fmt.Errorf("a measure cannot use itself")
					}
					if o.Window() {
						return 0, fmt.Errorf("%s is computed over the groups; an expression uses the groups' own measures", name)
					}
					return j, nil
				}
			}
			return 0, fmt.Errorf("no measure is named %q", name)
		})
		if err != nil {
			return err
		}
		t.Expr = e
	case "change", "pct_change", "running_total", "rank":
		return c.windowBody(field, t, m)
	}
	return nil
}

func (c *checker) windowBody(field string, t *MeasureTerm, m Measure) error {
	if t.Col != nil {
		return qerr(field+".column", "%s follows another measure: name it with of", t.Op)
	}
	if !c.p.Grouped() {
		return qerr(field+".op", "%s is computed over groups; it needs group_by", t.Op)
	}
	if t.Op != "rank" && c.p.Series < 0 {
		return qerr(field+".op", "%s follows a time series: group_by needs a date or timestamp column with a bucket", t.Op)
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

// firstLast checks a first or last measure: a column of any type, and
// the number, date or timestamp column order_by names.
func (c *checker) firstLast(field string, t *MeasureTerm, m Measure, needCol func(string, func(string) bool) error) error {
	if err := needCol("a column", func(string) bool { return true }); err != nil {
		return err
	}
	if m.OrderBy == "" {
		return qerr(field+".order_by", "%s needs order_by: the date, timestamp or number column that says which row is %s", t.Op, t.Op)
	}
	col, err := c.column(field+".order_by", m.OrderBy)
	if err != nil {
		return err
	}
	if !Numeric(col.Type) && col.Type != typing.TypeDate && col.Type != typing.TypeTimestamp {
		return qerr(field+".order_by", "order_by needs a date, timestamp or number column; %q is %s", col.Key, col.typeSaid())
	}
	t.OrderBy = col
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
		over = over || m.Window() || m.Op == "share"
	}
	if !over || p.Series < 0 {
		return qerr("windows", "windows: all applies to change, pct_change, running_total, rank and share over a time series "+
			"(group_by a date or timestamp column with a bucket)")
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

// WindowsAll reports whether the measures over the groups ran over
// every bucket, with filters on the series column held back.
func (p *AnalysisPlan) WindowsAll() bool { return len(p.SeriesWhere) > 0 }

// checkCycles refuses an expression that uses itself through others. Each
// measure is walked once (a measure done is never entered again), so the
// work is linear in the references written, however they repeat.
func (c *checker) checkCycles() error {
	const (
		fresh = iota
		open
		done
	)
	state := make([]int, len(c.p.Measures))
	var walk func(i int) error
	walk = func(i int) error {
		switch state[i] {
		case open:
			return qerr(fmt.Sprintf("measures[%d].expr", i), "measure %q uses itself through other measures", c.p.Measures[i].Name)
		case done:
			return nil
		}
		state[i] = open
		for _, r := range c.p.Measures[i].Expr.Refs() {
			if err := walk(r); err != nil {
				return err
			}
		}
		state[i] = done
		return nil
	}
	for i := range c.p.Measures {
		if err := walk(i); err != nil {
			return err
		}
	}
	return nil
}

// measureType is the catalog type of measure i's values.
func (c *checker) measureType(i int) string {
	m := c.p.Measures[i]
	switch m.Op {
	case "count", "count_distinct", "rank":
		return typing.TypeInteger
	case "sum", "min", "max", "first", "last":
		return m.Col.Type
	case "change", "running_total":
		if t := c.measureType(m.Of); t == typing.TypeInteger || t == typing.TypeDecimal {
			return t
		}
	}
	return typing.TypeDouble
}

// outName is how an output column is named in top.per and sort_by: a
// lookup column is written lookup.key in filters and groups, and both
// spellings name its output column lookup_key.
func outName(name string) string { return strings.ReplaceAll(name, ".", "_") }

func (c *checker) measureIndex(field, name string) (int, error) {
	var names []string
	for i, m := range c.p.Measures {
		if m.Name == name {
			return i, nil
		}
		names = append(names, m.Name)
	}
	return 0, qerr(field, "%q is not a measure", name).WithAllowed(names...)
}

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
		switch h.Op {
		case "eq", "ne", "gt", "gte", "lt", "lte", "between", "is_null":
		default:
			return qerr(field+".op", "unknown op %q", h.Op).WithAllowed("eq", "ne", "gt", "gte", "lt", "lte", "between", "is_null")
		}
		cond, err := checkAnalysisFilter(field, col, FilterNode{Column: h.Measure, Op: h.Op, Value: h.Value})
		if err != nil {
			return err
		}
		c.p.Having = append(c.p.Having, HavingCond{Measure: m, Op: cond.Op, Values: cond.Values, Null: cond.Null})
	}
	return nil
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
		return qerr("top.ties", "ties must be keep (every group tied with the n-th is kept) or cut (n groups exactly)").WithAllowed("keep", "cut")
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
