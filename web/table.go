package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/rbac"
)

// summaryTop is how many of a column's most frequent values a summary lists.
const summaryTop = 10

type pageColumn struct {
	Key, Label, Type, Class, SortURL, Arrow, AriaSort, SummaryURL string
	Identifier                                                    bool
	// Conds are the column's conditions, each its own inputs, then one
	// empty to add another; Ops are the operators its type takes, the
	// first its default; Input is the value inputs' type (text, date).
	Conds []pageCond
	Ops   []pageOp
	Input string
}

// pageCond is one condition of a column's filter as the page shows it.
type pageCond struct {
	// N counts the column's conditions from 0, Num from 1.
	N, Num int
	// ID ends the ids of the condition's inputs: -<n> for a condition
	// given, none for the empty one that adds another.
	ID              string
	Op, Value, To   string
	Error, ErrorID  string
	Blank, NewInput bool
}

// pageOp is an operator a column offers: its value in the address and
// its name in words.
type pageOp struct{ Value, Name string }

type pageCell struct {
	Text, Class, Title string
}

// tableView is what a table page's address asks for: filters, search and
// sort. The page, its export and its column summary read it alike. Each
// column takes several conditions: the address repeats o.<key> (the
// operator), f.<key> (the value) and t.<key> (between's upper bound) for
// each, in order.
type tableView struct {
	Columns []pageColumn
	Filters []catalog.Filter
	// filterAt maps each filter to the column and condition it came from.
	filterAt  [][2]int
	Search    string
	Sort, Dir string
}

// Operators by column type; the first is the default.
var (
	numberOps = []pageOp{{"eq", "="}, {"between", "between"}, {"gt", ">"}, {"gte", "≥"}, {"lt", "<"}, {"lte", "≤"}, {"ne", "≠"},
		{"in", "one of"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	dateOps = []pageOp{{"eq", "on"}, {"between", "between"}, {"gt", "after"}, {"gte", "on or after"}, {"lt", "before"},
		{"lte", "on or before"}, {"ne", "not on"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	textOps = []pageOp{{"contains", "contains"}, {"eq", "equals"}, {"starts_with", "starts with"}, {"ends_with", "ends with"},
		{"ne", "is not"}, {"in", "one of"}, {"gt", "after (A–Z)"}, {"lt", "before (A–Z)"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
	boolOps = []pageOp{{"eq", "is"}, {"is_blank", "is blank"}, {"not_blank", "is not blank"}}
)

// opsFor are the operators a column of type typ offers.
func opsFor(typ string) []pageOp {
	switch {
	case catalog.Numeric(typ):
		return numberOps
	case typ == "date" || typ == "timestamp":
		return dateOps
	case typ == "boolean":
		return boolOps
	}
	return textOps
}

func knownOp(ops []pageOp, op string) bool {
	for _, o := range ops {
		if o.Value == op {
			return true
		}
	}
	return false
}

func viewOf(t *catalog.Table, q url.Values) *tableView {
	v := &tableView{Search: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort"), Dir: q.Get("dir")}
	v.Columns = make([]pageColumn, len(t.Columns))
	for i, col := range t.Columns {
		pc := pageColumn{Key: col.Key, Label: col.Label, Type: col.Type, Identifier: col.Identifier, Class: "text", Ops: opsFor(col.Type), Input: "text"}
		if catalog.Numeric(col.Type) {
			pc.Class = "num"
		}
		if col.Type == "date" {
			pc.Input = "date"
		}
		if pc.Label == "" {
			pc.Label = col.Key
		}
		ops, vals, tos := q["o."+col.Key], q["f."+col.Key], q["t."+col.Key]
		for n := range max(len(ops), len(vals)) {
			c := pageCond{Op: at(ops, n), Value: strings.TrimSpace(at(vals, n)), To: strings.TrimSpace(at(tos, n))}
			if c.Op == "" || c.Op == "is_null" && c.Value == "" {
				c.Op = pc.Ops[0].Value
			}
			f, ok := pageFilter(col, c)
			if !ok {
				continue
			}
			c.N, c.Num, c.ID = len(pc.Conds), len(pc.Conds)+1, "-"+strconv.Itoa(len(pc.Conds))
			c.Blank = c.Op == "is_blank" || c.Op == "not_blank"
			pc.Conds = append(pc.Conds, c)
			v.Filters = append(v.Filters, f)
			v.filterAt = append(v.filterAt, [2]int{i, c.N})
		}
		pc.Conds = append(pc.Conds, pageCond{N: len(pc.Conds), Op: pc.Ops[0].Value, NewInput: true})
		v.Columns[i] = pc
	}
	return v
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}

// pageFilter reads a condition as the page's plans take it; a condition
// with nothing to compare is none. in takes a comma-separated list;
// between both bounds (one alone is at least or at most); an operator the
// column does not offer is kept, for the plan to refuse beside it.
func pageFilter(col catalog.Column, c pageCond) (catalog.Filter, bool) {
	f := catalog.Filter{Column: col.Key, Op: c.Op, Value: c.Value}
	switch c.Op {
	case "is_blank", "not_blank":
		f.Op, f.Value = "is_blank", c.Op == "is_blank"
		return f, true
	case "is_null":
		f.Value = c.Value != "false"
		return f, true
	case "between":
		switch {
		case c.Value != "" && c.To != "":
			f.Value = []any{c.Value, c.To}
		case c.Value != "":
			f.Op = "gte"
		case c.To != "":
			f.Op, f.Value = "lte", c.To
		default:
			return f, false
		}
		return f, true
	case "in":
		var list []any
		for _, v := range strings.Split(c.Value, ",") {
			list = append(list, strings.TrimSpace(v))
		}
		f.Value = list
	}
	return f, c.Value != ""
}

// query is the view as a files.query_table query, all rows.
func (v *tableView) query(tableID string) catalog.Query {
	return catalog.Query{FileID: tableID, Filters: v.Filters, Search: v.Search, SortBy: v.Sort, Direction: v.Dir}
}

var filterField = regexp.MustCompile(`^filters\[(\d+)\]`)

// place puts an invalid-argument error beside the input it is about and
// returns the text for the top of the page. Other errors are not the
// page's to show.
func (v *tableView) place(err error) (string, bool) {
	e := datadesk.AsError(err)
	if e.Code != datadesk.Invalid {
		return "", false
	}
	if m := filterField.FindStringSubmatch(e.Field); m != nil {
		if i, _ := strconv.Atoi(m[1]); i < len(v.filterAt) {
			c := &v.Columns[v.filterAt[i][0]]
			cond := &c.Conds[v.filterAt[i][1]]
			cond.Error, cond.ErrorID = e.Message, "e-"+c.Key+cond.ID
			return fmt.Sprintf("The filter on %s cannot be used: %s. Change it and apply the filters again.", c.Label, e.Message), true
		}
	}
	switch e.Field {
	case "search":
		return "The search cannot be used: " + e.Message + ".", true
	case "sort", "sort_by", "direction":
		return "The sort cannot be used: " + e.Message + ".", true
	}
	return "", false
}

// tableData is what the table page shows.
type tableData struct {
	page
	Table                        *catalog.Table
	Columns                      []pageColumn
	Rows                         [][]pageCell
	Total, From, To, Page, Pages int64
	// TotalText and SentenceRest say what the page shows in words, the
	// count first; NoMatch, for nothing matched, which condition is why.
	TotalText, SentenceRest, NoMatch string
	TableRows                        string
	// ViewQuery is the page's view as an address's query, to save;
	// MadeBy says, for a table an analysis or a query stored, what made it.
	ViewQuery, MadeBy                   string
	Filtered                            bool
	Search, Sort, Dir                   string
	Problem                             string
	FirstURL, PrevURL, NextURL, LastURL string
	HasPrev, HasNext                    bool
	ExportXLSX, ExportCSV, ClearURL     string
	Labels                              *catalog.Labels
	LabelsTime                          string
	Chart                               template.HTML
	ChartLabel, ChartValue              string
	Summary                             *columnSummary
	Read                                *readInfo
	Group                               *pageGroup
	// Query is the page's view as an address has it, which the grouping
	// form keeps.
	Query url.Values
}

// readInfo is how a table of a file was read, beside the control that
// reads the file again with its header in another row.
type readInfo struct {
	HeaderRow int64
	Asked     bool
	Skipped   []catalog.SkippedRow
	Notes     []string
	// CanReread: the caller may upload, which reading again is.
	CanReread bool
}

// TablePage shows a page of a table's rows under the view the address
// names (filters, search, sort), with a column's summary when asked.
func (h *Handler) TablePage(c *echo.Context) error {
	store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	view := viewOf(t, q)
	req := catalog.PageRequest{Limit: webPageSize, Sort: view.Sort, Direction: view.Dir, Filters: view.Filters, Search: view.Search}
	req.Offset, _ = strconv.ParseInt(q.Get("offset"), 10, 64)
	req.Offset = max(req.Offset, 0)
	status := http.StatusOK
	data := tableData{page: h.pageBase(c, t.Name), Table: t, Filtered: len(req.Filters) > 0 || view.Search != "",
		Search: view.Search, Sort: req.Sort, Dir: req.Direction, ClearURL: "/tables/" + t.ID}
	p, err := store.Rows(ctx, t.ID, req)
	if err != nil {
		// A mistyped filter is shown where it was typed, with every
		// filter kept, instead of leaving the page.
		problem, ok := view.place(err)
		if !ok {
			return h.pageError(c, err)
		}
		status, data.Problem = http.StatusBadRequest, problem
		p = &catalog.Page{Columns: t.Columns, Sort: req.Sort}
	}
	if err == nil && len(p.Rows) == 0 && p.Total > 0 && req.Offset > 0 {
		// Past the last page: the last page.
		req.Offset = (p.Total - 1) / webPageSize * webPageSize
		if p, err = store.Rows(ctx, t.ID, req); err != nil {
			return h.pageError(c, err)
		}
	}
	data.Dir = p.Direction
	if data.Problem == "" {
		data.TotalText, data.SentenceRest = view.sentence(t, p.Total, p.Sort, p.Direction)
		data.TableRows = grouped(t.RowCount)
		data.ViewQuery = viewQuery(q).Encode()
		if p.Total == 0 && data.Filtered {
			if data.NoMatch, err = whyNone(ctx, store, t, view); err != nil {
				return h.pageError(c, err)
			}
		}
	}
	h.fillTable(&data, t, view, q, p, req.Offset)
	data.Group, data.Query = groupOf(t, q), viewQuery(q)
	if data.Group.Asked && data.Problem == "" {
		if err := data.Group.run(ctx, store, t, view, q); err != nil {
			return h.pageError(c, err)
		}
	}
	if key := q.Get("summary"); key != "" && data.Problem == "" {
		if data.Summary, err = summarize(ctx, store, t, view, key); err != nil {
			return h.pageError(c, err)
		}
		data.Summary.facets(t.ID, q)
		if err := data.Summary.ranges(ctx, store, t, view, q); err != nil {
			return h.pageError(c, err)
		}
	}
	if t.Query != "" {
		source := "a table since deleted"
		if src, err := store.Table(ctx, t.SourceTableID); err == nil {
			source = src.Name
		}
		data.MadeBy = "Made from " + source + " by " + catalog.DescribeQuery(t.Query) + ", " + t.CreatedAt.Format("2006-01-02 15:04") + "."
	}
	if data.Labels, err = store.Labels(ctx, t.ID); err != nil {
		return h.pageError(c, err)
	}
	if data.Labels != nil {
		data.LabelsTime = data.Labels.UpdatedAt.Format("2006-01-02 15:04")
	}
	data.Chart, data.ChartLabel, data.ChartValue = barChart(t, p)
	if t.Query == "" && t.SourceTableID == "" && t.Report.HeaderRow > 0 {
		data.Read = &readInfo{HeaderRow: t.Report.HeaderRow, Asked: t.Report.HeaderAsked, Skipped: t.Report.Skipped, Notes: t.Report.Notes,
			CanReread: h.may(c, rbac.ActionUpload)}
	}
	return h.render(c, status, "table", data)
}

// RereadForm reads the file of a table again from the table page, with
// the header in the row the form names, into a new file and tables (the
// API's POST /v1/files/{id}/read), and shows the new table.
func (h *Handler) RereadForm(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionUpload, "table")
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	ctx := c.Request().Context()
	back := func(err error) error {
		return c.Redirect(http.StatusSeeOther, h.notes.withNote("/tables/"+id, nil, "Not done: "+datadesk.AsError(err).Message))
	}
	t, err := store.Table(ctx, id)
	if err != nil {
		return h.pageError(c, err)
	}
	opts, err := ingest.ParseOptions(c.FormValue("header_row"), "")
	if err != nil {
		return back(err)
	}
	f, err := store.File(ctx, t.FileID)
	if err != nil {
		return back(err)
	}
	if len(f.Tables) > 1 {
		opts.Sheet = t.Name
	}
	nf, err := h.d.ReadAgain(c, store, f.ID, opts)
	if err != nil {
		return back(err)
	}
	next := nf.Tables[0].ID
	for _, nt := range nf.Tables {
		if nt.Name == t.Name {
			next = nt.ID
		}
	}
	msg := fmt.Sprintf("Read %s again with the header in row %d: a new table; the one before stays.", f.Filename, opts.HeaderRow)
	return c.Redirect(http.StatusSeeOther, h.notes.withNote("/tables/"+next, nil, msg))
}

// fillTable lays out a page of rows with its links: sorting, paging,
// summaries and exports keep the filters, search and sort.
func (h *Handler) fillTable(d *tableData, t *catalog.Table, view *tableView, q url.Values, p *catalog.Page, offset int64) {
	link := func(path string, mod func(url.Values)) string {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		mod(v)
		return path + "?" + v.Encode()
	}
	here := "/tables/" + t.ID
	cols := view.Columns
	for i := range cols {
		dir, arrow, aria := "asc", "", "none"
		if p.Sort == cols[i].Key {
			if p.Direction == "asc" {
				dir, arrow, aria = "desc", " ▲", "ascending"
			} else {
				arrow, aria = " ▼", "descending"
			}
		}
		key := cols[i].Key
		cols[i].SortURL = link(here, func(v url.Values) { v.Set("sort", key); v.Set("dir", dir); v.Del("offset") })
		cols[i].SummaryURL = link(here, func(v url.Values) { v.Set("summary", key) }) + "#summary"
		cols[i].Arrow, cols[i].AriaSort = arrow, aria
	}
	d.Columns = cols
	d.Rows = make([][]pageCell, len(p.Rows))
	for i, r := range p.Rows {
		d.Rows[i] = make([]pageCell, len(r))
		for j, v := range r {
			d.Rows[i][j] = cellOf(v, cols[j].Class)
		}
	}
	pages := max(int64(math.Ceil(float64(p.Total)/webPageSize)), 1)
	lastOffset := (pages - 1) * webPageSize
	at := func(off int64) string {
		return link(here, func(v url.Values) { v.Set("offset", strconv.FormatInt(max(off, 0), 10)); v.Del("summary") })
	}
	d.Total, d.From, d.To = p.Total, min(offset+1, p.Total), offset+int64(len(p.Rows))
	d.Page, d.Pages = min(offset/webPageSize+1, pages), pages
	d.HasPrev, d.HasNext = d.Page > 1, d.Page < pages
	d.FirstURL, d.PrevURL, d.NextURL, d.LastURL = at(0), at(offset-webPageSize), at(min(offset+webPageSize, lastOffset)), at(lastOffset)
	export := func(format string) string {
		return link(here+"/export", func(v url.Values) { v.Del("offset"); v.Del("summary"); v.Set("format", format) })
	}
	d.ExportXLSX, d.ExportCSV = export("xlsx"), export("csv")
}

// TableViewExport streams what a table page shows, all of its rows and
// not only the page: the page's filters, search and sort, as XLSX or CSV,
// read through the same plan as files.query_table.
func (h *Handler) TableViewExport(c *echo.Context) error {
	format := c.QueryParam("format")
	if format != "xlsx" && format != "csv" {
		return h.pageError(c, datadesk.Errorf(datadesk.Invalid, "format must be xlsx or csv").WithField("format").WithAllowed("xlsx", "csv"))
	}
	store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	ctx := c.Request().Context()
	view := viewOf(t, c.Request().URL.Query())
	plan, err := store.Plan(ctx, view.query(t.ID))
	if err != nil {
		return h.pageError(c, err)
	}
	counted, err := store.Run(ctx, plan)
	if err != nil {
		return h.pageError(c, err)
	}
	src := exports.Source{Columns: t.Columns, Count: counted.MatchedRowCount, Rows: func(yield func([]any) error) error {
		return store.Stream(ctx, plan, yield)
	}}
	name := view.exportName(t)
	if err := h.d.StreamExport(c, format, name, src, exports.Options{SheetName: t.Name, BOM: format == "csv", TempDir: store.IncomingDir()}); err != nil {
		return h.pageError(c, err)
	}
	return nil
}

// cellOf shows a value: an empty cell (NULL) differs from empty text.
func cellOf(v any, class string) pageCell {
	switch x := v.(type) {
	case nil:
		return pageCell{Text: "∅", Class: "null", Title: "empty cell (null)"}
	case string:
		if x == "" {
			return pageCell{Class: class, Title: "empty text"}
		}
		return pageCell{Text: x, Class: class}
	case json.Number:
		return pageCell{Text: ShownNumber(x.String()), Class: class, Title: paddedTitle(x.String())}
	case float64:
		return pageCell{Text: ShownNumber(strconv.FormatFloat(x, 'f', -1, 64)), Class: class}
	case int64:
		return pageCell{Text: ShownNumber(strconv.FormatInt(x, 10)), Class: class}
	}
	return pageCell{Text: fmt.Sprint(v), Class: class}
}

// ShownNumber writes a number as a reader takes it in: a decimal without
// the zeros that pad it to its column's scale (33.93911, not 33.93911000)
// and, from five digits on, with thousands separators (12,345; a year
// stays 2024, as style guides write four-digit numbers).
func ShownNumber(s string) string {
	sign, digits := "", s
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	whole, frac, hasFrac := strings.Cut(digits, ".")
	if strings.ContainsAny(whole, "eE") || strings.Trim(whole, "0123456789") != "" {
		return s
	}
	if hasFrac {
		frac = strings.TrimRight(frac, "0")
	}
	if len(whole) > 4 {
		whole = groupDigits(whole)
	}
	if frac != "" {
		return sign + whole + "." + frac
	}
	return sign + whole
}

// paddedTitle is a decimal's stored text as its cell's title, when the
// page shows it shorter.
func paddedTitle(s string) string {
	if ShownNumber(s) == s {
		return ""
	}
	return "stored as " + s
}

// facets links each of a summary's most frequent values to the page with
// that value added to the filters, as datasette's facets do: equals the
// value, or is blank for the empty one.
func (sum *columnSummary) facets(tableID string, q url.Values) {
	for i := range sum.Top {
		v := copyAddress(q, "offset", "summary", noteParam, noteSigParam)
		op, value := "eq", sum.Top[i].raw
		if sum.Top[i].Value.Class == "null" || value == "" {
			op, value = "is_blank", ""
		}
		addCondition(v, sum.Key, op, value)
		sum.Top[i].URL = "/tables/" + tableID + "?" + v.Encode()
	}
}

// copyAddress is a copy of a page's address without the keys drop.
func copyAddress(q url.Values, drop ...string) url.Values {
	v := url.Values{}
	for k, vals := range q {
		v[k] = append([]string(nil), vals...)
	}
	for _, k := range drop {
		v.Del(k)
	}
	return v
}

// addCondition adds a condition on column key to an address: a column's
// conditions are its o., f. and t. lists, kept in step.
func addCondition(v url.Values, key, op, value string) {
	n := max(len(v["o."+key]), len(v["f."+key]), len(v["t."+key]))
	for prefix, add := range map[string]string{"o.": op, "f.": value, "t.": ""} {
		v[prefix+key] = append(padded(v[prefix+key], n), add)
	}
}

// padded is a list of an address as long as n, so that a condition
// added to each of a column's lists stays in step.
func padded(list []string, n int) []string {
	list = append([]string(nil), list...)
	for len(list) < n {
		list = append(list, "")
	}
	return list
}

// columnSummary describes one column of the rows a page's view matches.
type columnSummary struct {
	Key, Label         string
	Rows, Nulls        int64
	Distinct           int64
	Min, Max           pageCell
	Top                []topValue
	TopShown, TopTotal int
	// Ranges are a number column's equal ranges, or a date column's years
	// (months within one year), each a facet.
	Ranges     []topValue
	RangesName string
	min, max   any
}

type topValue struct {
	Value pageCell
	Count int64
	// URL is the page with this value added to the filters (a facet).
	URL string
	raw string
}

// summarize counts a column's values through files.query_table's plans:
// rows and non-empty values, the groups of its values (how many, and the
// most frequent), and its first and last value in sort order.
// Errors: invalid (summary: no such column), and the plans' errors.
func summarize(ctx context.Context, store *engine.Store, t *catalog.Table, view *tableView, key string) (*columnSummary, error) {
	var col *catalog.Column
	for i := range t.Columns {
		if t.Columns[i].Key == key {
			col = &t.Columns[i]
		}
	}
	if col == nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "no column %q to summarise", key).WithField("summary")
	}
	// The groups and the counts read the table apart: they run at once.
	// The groups give the column's first and last value in its order
	// too (a plan's Bounds): a second read of the column for them took as
	// long as the groups.
	queries := summaryQueries(view.query(t.ID), col)
	results := make([]*catalog.QueryResult, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() {
			p, err := store.Plan(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			p.Bounds = i == 0
			results[i], errs[i] = store.Run(ctx, p)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res, counts := results[0], results[1]
	rows := int64Of(counts.Aggregates["rows"])
	class := viewOfColumn(col)
	sum := &columnSummary{Key: col.Key, Label: col.Label, Rows: rows, Nulls: rows - int64Of(counts.Aggregates["values"])}
	sum.setBound(true, res.First, class)
	sum.setBound(false, res.Last, class)
	if res.GroupCount != nil {
		sum.Distinct = *res.GroupCount
	}
	for _, r := range res.Rows {
		raw := ""
		if r[0] != nil {
			raw = fmt.Sprint(r[0])
		}
		sum.Top = append(sum.Top, topValue{Value: cellOf(r[0], class), Count: int64Of(r[1]), raw: raw})
	}
	return sum, nil
}

// summaryQueries are the plans of a column's summary over the view's
// query: its values' groups, the most frequent first (whose plan, asked
// for its Bounds, gives the first and last value too), and the counts
// of rows and values.
func summaryQueries(base catalog.Query, col *catalog.Column) []catalog.Query {
	base.SortBy, base.Direction = "", ""
	present := base
	present.Filters = append(append([]catalog.Filter(nil), base.Filters...), catalog.Filter{Column: col.Key, Op: "is_null", Value: false})
	countName := "count"
	if strings.EqualFold(col.Key, countName) {
		countName = "count_of_rows"
	}
	counts := base
	counts.Aggregates = []catalog.Aggregate{{Op: "count", Name: "rows"}, {Op: "count", Column: col.Key, Name: "values"}}
	groups := present
	groups.GroupBy, groups.Aggregates = []string{col.Key}, []catalog.Aggregate{{Op: "count", Name: countName}}
	groups.SortBy, groups.Direction, groups.Limit = countName, "desc", summaryTop
	return []catalog.Query{groups, counts}
}

// setBound sets a summary's first (or last) value, raw as the plan gave it.
func (sum *columnSummary) setBound(first bool, raw any, class string) {
	cell := pageCell{Text: "∅", Class: "null", Title: "no values"}
	if raw != nil {
		cell = cellOf(raw, class)
	}
	if first {
		sum.Min, sum.min = cell, raw
	} else {
		sum.Max, sum.max = cell, raw
	}
}

func viewOfColumn(c *catalog.Column) string {
	if catalog.Numeric(c.Type) {
		return "num"
	}
	return "text"
}

func int64Of(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	}
	return 0
}

// barChart draws a grouped view's first numeric aggregate for the rows on
// the page, each bar labelled by all of its group columns, as a
// server-rendered SVG.
func barChart(t *catalog.Table, p *catalog.Page) (template.HTML, string, string) {
	if t.SourceTableID == "" || !strings.Contains(t.Query, `"group_by"`) || len(p.Rows) == 0 {
		return "", "", ""
	}
	var q catalog.Query
	if json.Unmarshal([]byte(t.Query), &q) != nil || len(q.GroupBy) == 0 {
		return "", "", ""
	}
	groups := min(len(q.GroupBy), len(t.Columns))
	valueIdx := -1
	for i := groups; i < len(t.Columns); i++ {
		if catalog.Numeric(t.Columns[i].Type) {
			valueIdx = i
			break
		}
	}
	if valueIdx < 0 {
		return "", "", ""
	}
	names := make([]string, groups)
	for i := range names {
		names[i] = t.Columns[i].Key
	}
	label, value := strings.Join(names, ", "), t.Columns[valueIdx].Key
	return template.HTML(svgBars(barsOf(p.Rows, groups, valueIdx), "Bar chart of "+value+" by "+label)), label, value
}

// chartBar is one bar of a chart: its label and value.
type chartBar struct {
	label string
	value float64
	null  bool
}

// barsOf reads bars from rows: the first groups cells label each, cell
// valueIdx is its value.
func barsOf(rows [][]any, groups, valueIdx int) []chartBar {
	var bars []chartBar
	for _, r := range rows {
		var v float64
		switch x := r[valueIdx].(type) {
		case int64:
			v = float64(x)
		case float64:
			v = x
		case json.Number:
			v, _ = x.Float64()
		}
		parts := make([]string, groups)
		for i := range parts {
			parts[i] = cellOf(r[i], "").Text
		}
		bars = append(bars, chartBar{label: strings.Join(parts, " · "), value: v, null: r[valueIdx] == nil})
	}
	return bars
}

// svgBars draws bars as a standalone SVG whose accessible name is name.
func svgBars(bars []chartBar, name string) string {
	top, longest := 0.0, 0
	for _, br := range bars {
		longest = max(longest, len([]rune(br.label)))
		top = math.Max(top, math.Abs(br.value))
	}
	// Labels get the room they need, up to half the chart.
	const width, rowH = 720.0, 22.0
	labelW := math.Min(math.Max(float64(longest)*7+12, 80), width/2)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`,
		width, rowH*float64(len(bars))+4, width, rowH*float64(len(bars))+4, template.HTMLEscapeString(name))
	fmt.Fprintf(&b, `<title>%s</title>`, template.HTMLEscapeString(name))
	for i, br := range bars {
		w := 0.0
		if top > 0 {
			w = (width - labelW - 90) * math.Abs(br.value) / top
		}
		y := float64(i)*rowH + 2
		shown := strconv.FormatFloat(br.value, 'f', -1, 64)
		fmt.Fprintf(&b, `<text class="bar-label" x="%.0f" y="%.0f" text-anchor="end" font-size="12" font-family="sans-serif">%s</text>`, labelW-6, y+15, template.HTMLEscapeString(br.label))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="%.0f" fill="#0969da"><title>%s: %s</title></rect>`,
			labelW, y+3, w, rowH-6, template.HTMLEscapeString(br.label), shown)
		if br.null {
			shown = "∅ no value"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="12" font-family="sans-serif">%s</text>`, labelW+w+4, y+15, shown)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
