package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/tableview"
)

// pageColumn is a column as the page lays it out: in the grid, its head
// (sort and summary links); in the panel of filters and columns, its
// conditions and the links that show, hide and move it.
type pageColumn struct {
	Key, Label, Type, Class, SortURL, Arrow, AriaSort, SummaryURL string
	Identifier                                                    bool
	// Conds are the column's conditions, each its own inputs, then one
	// empty to add another; Ops are the operators its type takes, the
	// first its default; Input is the value inputs' type (text, date).
	Conds []pageCond
	Ops   []pageOp
	Input string
	// Shown: the grid shows the column; EarlierURL and LaterURL move it
	// among the shown ones. The panel links its sort and summary too
	// (SortURL, SummaryURL), which the grid's head may hold out of view.
	Shown                bool
	EarlierURL, LaterURL string
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

// pageOp is an operator or a choice the page offers: its value in the
// address and its name in words.
type pageOp = tableview.Op

type pageCell struct {
	Text, Class, Title string
}

// knownOp reports whether op is among ops.
func knownOp(ops []pageOp, op string) bool { return tableview.Known(ops, op) }

// tableView is what a table page's address asks for (tableview.View):
// conditions, search, sort, columns, summaries and grouping. The page,
// its export, its summaries and its grouping read it alike.
type tableView struct {
	*tableview.View
	// Filters are the conditions as the plans take them; filterAt, the
	// position of each one's column in the table and among its
	// conditions.
	Filters  []catalog.Filter
	filterAt [][2]int
	// Panel are the table's columns with their conditions: the shown
	// ones in their order, then the hidden ones.
	Panel []pageColumn
	// err is why the address cannot be read; the view is then empty.
	err error
}

// viewOf reads a page's address; one it cannot read gives an empty view
// that says why (err), never the whole table in its place.
func viewOf(t *catalog.Table, q url.Values) *tableView {
	v, err := tableview.Parse(t, q, tableview.ForPage)
	if err != nil {
		empty := &tableView{View: &tableview.View{Table: t, Conds: make([][]tableview.Cond, len(t.Columns))}, err: err}
		empty.Panel = panelOf(empty.View)
		return empty
	}
	tv := &tableView{View: v}
	tv.Filters, tv.filterAt = v.Filters()
	tv.Panel = panelOf(v)
	return tv
}

// panelOf lays out every column of the view's table with its
// conditions and the links that show, hide and move it.
func panelOf(v *tableview.View) []pageColumn {
	shown := v.Shown()
	order := slices.Clone(shown)
	for _, k := range v.Table.Keys() {
		if !slices.Contains(shown, k) {
			order = append(order, k)
		}
	}
	panel := make([]pageColumn, len(order))
	for n, key := range order {
		i := slices.Index(v.Table.Keys(), key)
		pc := columnOf(v.Table.Columns[i])
		pc.Shown = n < len(shown)
		for c, cond := range v.Conds[i] {
			pc.Conds = append(pc.Conds, pageCond{N: c, Num: c + 1, ID: "-" + strconv.Itoa(c), Op: cond.Op, Value: cond.Value, To: cond.To,
				Blank: tableview.Blank(cond.Op)})
		}
		pc.Conds = append(pc.Conds, pageCond{N: len(pc.Conds), Op: pc.Ops[0].Value, NewInput: true})
		pc.EarlierURL, pc.LaterURL = columnLinks(v, shown, n)
		pc.SortURL, pc.SummaryURL = sortURL(v, key), summaryURL(v, key)
		panel[n] = pc
	}
	return panel
}

// columnOf is a column as the page shows it, before its links.
func columnOf(col catalog.Column) pageColumn {
	pc := pageColumn{Key: col.Key, Label: col.Label, Type: col.Type, Identifier: col.Identifier, Class: "text", Ops: tableview.OpsFor(col.Type), Input: "text"}
	if catalog.Numeric(col.Type) {
		pc.Class = "num"
	}
	if col.Type == "date" {
		pc.Input = "date"
	}
	if pc.Label == "" {
		pc.Label = col.Key
	}
	return pc
}

// columnLinks are the addresses that move the n-th column of the panel
// earlier or later among the shown ones; "" where it cannot move.
func columnLinks(v *tableview.View, shown []string, n int) (earlier, later string) {
	swap := func(a, b int) string {
		w := v.Clone()
		w.Message = ""
		w.Columns = slices.Clone(shown)
		w.Columns[a], w.Columns[b] = w.Columns[b], w.Columns[a]
		return w.Href("/tables/" + v.Table.ID)
	}
	if n > 0 && n < len(shown) {
		earlier = swap(n-1, n)
	}
	if n < len(shown)-1 {
		later = swap(n, n+1)
	}
	return earlier, later
}

// sortURL is the view sorted by the column of key: ascending, or
// descending when it is sorted ascending already.
func sortURL(v *tableview.View, key string) string {
	w := v.Clone()
	w.Message, w.Offset = "", 0
	w.Dir = "asc"
	if v.Sort == key && v.Dir != "desc" {
		w.Dir = "desc"
	}
	w.Sort = key
	return w.Href("/tables/" + v.Table.ID)
}

// summaryURL is the view with the column of key summarised beside the
// others, at its summary.
func summaryURL(v *tableview.View, key string) string {
	w := v.Clone()
	w.Message = ""
	if !slices.Contains(w.Summaries, key) {
		w.Summaries = append(w.Summaries, key)
	}
	return w.Href("/tables/"+v.Table.ID) + "#facet-" + key
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
			key := v.Table.Columns[v.filterAt[i][0]].Key
			for p := range v.Panel {
				if c := &v.Panel[p]; c.Key == key {
					cond := &c.Conds[v.filterAt[i][1]]
					cond.Error, cond.ErrorID = e.Message, "e-"+c.Key+cond.ID
					return fmt.Sprintf("The filter on %s cannot be used: %s. Change it and apply the filters again.", c.Label, e.Message), true
				}
			}
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
	Panel                        []pageColumn
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
	// JSONURL is the page's twin in the rows API: the same parameters.
	JSONURL    string
	Labels     *catalog.Labels
	LabelsTime string
	Chart      template.HTML
	ChartLabel string
	ChartValue string
	Summaries  []*pageSummary
	Read       *readInfo
	Group      *pageGroup
	// answer is the page of rows as the store answered it.
	answer *catalog.Page
	// Keep are the view's parameters a form that sets others carries:
	// the filters' form keeps the summaries and the grouping; the
	// grouping's form every parameter but its own.
	KeepFilters, KeepGroup []param
}

// param is one parameter of an address, as a form's hidden input.
type param struct{ Name, Value string }

// params are the parameters of a view's address, in its order.
func params(v *tableview.View) []param {
	var out []param
	for _, kv := range strings.Split(v.Encode(), "&") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		k, _ = url.QueryUnescape(k)
		val, _ = url.QueryUnescape(val)
		out = append(out, param{k, val})
	}
	return out
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
// names (conditions, search, sort, columns, summaries, grouping). An
// address that holds more than is set (a form's empty fields) is sent
// to the one that holds only what is; one the page cannot read is said
// at the top (400), with no rows.
func (h *Handler) TablePage(c *echo.Context) error {
	store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	view := viewOf(t, c.Request().URL.Query())
	if to := canonical(view); view.err == nil && !sameQuery(to, c.Request().URL.RawQuery) {
		return c.Redirect(http.StatusSeeOther, "/tables/"+t.ID+strings.TrimSuffix("?"+to, "?"))
	}
	data := tableData{page: h.pageBase(c, t.Name), Table: t, Filtered: view.Filtered(), Search: view.Search, Sort: view.Sort, Dir: view.Dir}
	if view.Message != "" {
		data.Message = view.Message
	}
	status, err := h.tableRows(c, store, view, &data)
	if err != nil {
		return h.pageError(c, err)
	}
	if err := h.tableExtras(c, store, view, &data); err != nil {
		return h.pageError(c, err)
	}
	return h.render(c, status, "table", data)
}

// canonical is the address a view is shown at: what is set, and the
// message it carries.
func canonical(v *tableView) string {
	s := v.Encode()
	if v.Message == "" {
		return s
	}
	if s != "" {
		s += "&"
	}
	return s + "msg=" + url.QueryEscape(v.Message)
}

// sameQuery reports whether two queries hold the same values, however
// each is escaped: a browser escapes some characters otherwise than Go,
// and an address sent back escaped as it came must not be sent again.
func sameQuery(a, b string) bool {
	qa, errA := url.ParseQuery(a)
	qb, errB := url.ParseQuery(b)
	return errA == nil && errB == nil && maps.EqualFunc(qa, qb, slices.Equal[[]string])
}

// tableRows fills in the page of rows, its sentence and its links, and
// returns the page's status: 400 when the address or a filter cannot be
// used, said at the top and beside the filter, with every filter kept as
// typed.
func (h *Handler) tableRows(c *echo.Context, store *engine.Store, view *tableView, data *tableData) (int, error) {
	ctx := c.Request().Context()
	t := view.Table
	req := view.PageRequest(webPageSize)
	status := http.StatusOK
	var p *catalog.Page
	err := view.err
	if err == nil {
		p, err = store.Rows(ctx, t.ID, req)
	}
	if err != nil {
		problem, ok := view.place(err)
		if view.err != nil {
			problem, ok = "The address cannot be used: "+datadesk.AsError(err).Message+".", true
		}
		if !ok {
			return 0, err
		}
		status, data.Problem = http.StatusBadRequest, problem
		p = &catalog.Page{Columns: shownColumns(view), Sort: req.Sort}
	}
	if err == nil && len(p.Rows) == 0 && p.Total > 0 && req.Offset > 0 {
		// Past the last page: the last page.
		view.Offset = (p.Total - 1) / webPageSize * webPageSize
		if p, err = store.Rows(ctx, t.ID, view.PageRequest(webPageSize)); err != nil {
			return 0, err
		}
	}
	data.Dir = p.Direction
	if data.Problem == "" {
		data.TotalText, data.SentenceRest = view.sentence(t, p.Total, p.Sort, p.Direction)
		data.TableRows = grouped(t.RowCount)
		saved := view.Clone()
		saved.Offset, saved.Message = 0, ""
		data.ViewQuery = saved.Encode()
		if p.Total == 0 && data.Filtered {
			if data.NoMatch, err = whyNone(ctx, store, t, view); err != nil {
				return 0, err
			}
		}
	}
	fillTable(data, view, p)
	return status, nil
}

// shownColumns are the catalog columns a view shows, in its order.
func shownColumns(v *tableView) []catalog.Column {
	cols, _, err := v.Table.Choose(v.Shown())
	if err != nil || cols == nil {
		return v.Table.Columns
	}
	return cols
}

// tableExtras fills in what the page shows beside its rows: the
// grouping, the summaries, what made a stored table, the AI's labels, a
// grouped view's chart and how the file was read.
func (h *Handler) tableExtras(c *echo.Context, store *engine.Store, view *tableView, data *tableData) error {
	ctx := c.Request().Context()
	t := view.Table
	var err error
	data.Group = groupOf(t, c.Request().URL.Query())
	if data.Group.Asked && data.Problem == "" {
		if err := data.Group.run(ctx, store, t, view); err != nil {
			return err
		}
	}
	if len(view.Summaries) > 0 && data.Problem == "" {
		sums, err := view.Summarize(ctx, store)
		if err != nil {
			return err
		}
		data.Summaries = summariesOf(view.View, sums)
	}
	if t.Query != "" {
		source := "a table since deleted"
		if src, err := store.Table(ctx, t.SourceTableID); err == nil {
			source = src.Name
		}
		data.MadeBy = "Made from " + source + " by " + catalog.DescribeQuery(t.Query) + ", " + t.CreatedAt.Format("2006-01-02 15:04") + "."
	}
	if data.Labels, err = store.Labels(ctx, t.ID); err != nil {
		return err
	}
	if data.Labels != nil {
		data.LabelsTime = data.Labels.UpdatedAt.Format("2006-01-02 15:04")
	}
	if data.Problem == "" {
		data.Chart, data.ChartLabel, data.ChartValue = barChart(t, data.answer)
	}
	if t.Query == "" && t.SourceTableID == "" && t.Report.HeaderRow > 0 {
		data.Read = &readInfo{HeaderRow: t.Report.HeaderRow, Asked: t.Report.HeaderAsked, Skipped: t.Report.Skipped, Notes: t.Report.Notes,
			CanReread: h.may(c, rbac.ActionUpload)}
	}
	return nil
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
		setFlash(c, "Not done: "+datadesk.AsError(err).Message)
		return c.Redirect(http.StatusSeeOther, "/tables/"+id)
	}
	t, err := store.Table(ctx, id)
	if err != nil {
		return h.pageError(c, err)
	}
	opts, err := ingest.ParseOptions(func(name string) string {
		if name == "sheet" {
			return ""
		}
		return c.FormValue(name)
	})
	if err != nil {
		return back(err)
	}
	f, err := store.File(ctx, t.FileID)
	if err != nil {
		return back(err)
	}
	if len(f.Tables) > 1 && t.Report.Sheet != "" {
		opts.Sheet = t.Report.Sheet
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
	setFlash(c, fmt.Sprintf("Read %s again with %s: a new table; the one before stays.", f.Filename, opts))
	return c.Redirect(http.StatusSeeOther, "/tables/"+next)
}

// fillTable lays out a page of rows with its links: sorting, paging,
// summaries, the JSON twin and exports keep the view, each address
// holding only what is set.
func fillTable(d *tableData, view *tableView, p *catalog.Page) {
	t := view.Table
	here := "/tables/" + t.ID
	link := func(mod func(w *tableview.View)) string {
		w := view.Clone()
		w.Message = ""
		mod(w)
		return w.Href(here)
	}
	d.answer, d.Panel = p, view.Panel
	for _, col := range p.Columns {
		pc := columnOf(col)
		arrow, aria := "", "none"
		if p.Sort == col.Key {
			arrow, aria = " ▼", "descending"
			if p.Direction == "asc" {
				arrow, aria = " ▲", "ascending"
			}
		}
		pc.SortURL, pc.SummaryURL = sortURL(view.View, col.Key), summaryURL(view.View, col.Key)
		pc.Arrow, pc.AriaSort = arrow, aria
		d.Columns = append(d.Columns, pc)
	}
	d.Rows = make([][]pageCell, len(p.Rows))
	for i, r := range p.Rows {
		d.Rows[i] = make([]pageCell, len(r))
		for j, v := range r {
			d.Rows[i][j] = cellOf(v, d.Columns[j].Class)
		}
	}
	offset := view.Offset
	pages := max(int64(math.Ceil(float64(p.Total)/webPageSize)), 1)
	lastOffset := (pages - 1) * webPageSize
	at := func(off int64) string { return link(func(w *tableview.View) { w.Offset = max(off, 0) }) }
	d.Total, d.From, d.To = p.Total, min(offset+1, p.Total), offset+int64(len(p.Rows))
	d.Page, d.Pages = min(offset/webPageSize+1, pages), pages
	d.HasPrev, d.HasNext = d.Page > 1, d.Page < pages
	d.FirstURL, d.PrevURL, d.NextURL, d.LastURL = at(0), at(offset-webPageSize), at(min(offset+webPageSize, lastOffset)), at(lastOffset)
	export := func(format string) string {
		w := view.Clone()
		w.Offset, w.Summaries, w.Group, w.Message = 0, nil, tableview.Group{}, ""
		if q := w.Encode(); q != "" {
			return here + "/export?format=" + format + "&" + q
		}
		return here + "/export?format=" + format
	}
	d.ExportXLSX, d.ExportCSV = export("xlsx"), export("csv")
	d.ClearURL = link(func(w *tableview.View) { w.Conds, w.Search, w.Offset = make([][]tableview.Cond, len(t.Columns)), "", 0 })
	twin := view.Clone()
	twin.Message = ""
	d.JSONURL = twin.Href("/v1" + here + "/rows")
	d.KeepFilters = keepParams(view, func(w *tableview.View) {
		w.Conds, w.Search, w.Sort, w.Dir, w.Columns, w.Offset = nil, "", "", "", nil, 0
	})
	d.KeepGroup = keepParams(view, func(w *tableview.View) { w.Group, w.Offset = tableview.Group{}, 0 })
}

// keepParams are the parameters of the view, changed by mod, that a form
// carries as hidden inputs.
func keepParams(view *tableView, mod func(w *tableview.View)) []param {
	w := view.Clone()
	w.Message = ""
	mod(w)
	if w.Conds == nil {
		w.Conds = make([][]tableview.Cond, len(w.Table.Columns))
	}
	return params(w)
}

// TableViewExport streams what a table page shows, all of its rows and
// not only the page: the page's conditions, search, sort and columns, as
// XLSX or CSV, read through the same plan as files.query_table.
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
	q := c.Request().URL.Query()
	q.Del("format")
	view := viewOf(t, q)
	if view.err != nil {
		return h.pageError(c, view.err)
	}
	plan, err := store.Plan(ctx, view.Query())
	if err != nil {
		return h.pageError(c, err)
	}
	counted, err := store.Run(ctx, plan)
	if err != nil {
		return h.pageError(c, err)
	}
	src := exports.Source{Columns: shownColumns(view), Count: counted.MatchedRowCount, Rows: func(yield func([]any) error) error {
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

// barChart draws a grouped view's first numeric aggregate for the rows on
// the page, each bar labelled by all of its group columns, as a
// server-rendered SVG; none when the page does not show them all.
func barChart(t *catalog.Table, p *catalog.Page) (template.HTML, string, string) {
	if p == nil || t.SourceTableID == "" || !strings.Contains(t.Query, `"group_by"`) || len(p.Rows) == 0 {
		return "", "", ""
	}
	var q catalog.Query
	if json.Unmarshal([]byte(t.Query), &q) != nil || len(q.GroupBy) == 0 {
		return "", "", ""
	}
	groups := min(len(q.GroupBy), len(t.Columns))
	shownAt := func(key string) int {
		return slices.IndexFunc(p.Columns, func(c catalog.Column) bool { return c.Key == key })
	}
	var names []string
	var cells []int
	for i := range groups {
		names = append(names, t.Columns[i].Key)
		cells = append(cells, shownAt(t.Columns[i].Key))
	}
	value := ""
	for i := groups; i < len(t.Columns) && value == ""; i++ {
		if catalog.Numeric(t.Columns[i].Type) {
			value = t.Columns[i].Key
		}
	}
	cells = append(cells, shownAt(value))
	if value == "" || slices.Contains(cells, -1) {
		return "", "", ""
	}
	// The bars read the group cells, then the value, in that order.
	rows := make([][]any, len(p.Rows))
	for i, r := range p.Rows {
		for _, c := range cells {
			rows[i] = append(rows[i], r[c])
		}
	}
	label := strings.Join(names, ", ")
	return template.HTML(svgBars(barsOf(rows, groups, groups), "Bar chart of "+value+" by "+label)), label, value
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
		shown := chartNumber(br.value)
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

// chartNumber writes a chart's value as a reader takes it in: thousands
// separated (4,523), at most two decimals from 1 up, four significant
// digits below.
func chartNumber(v float64) string {
	prec := 2
	if a := math.Abs(v); a > 0 && a < 1 {
		prec = max(2, 3-int(math.Floor(math.Log10(a))))
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	sign, digits := "", s
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	whole, frac, hasFrac := strings.Cut(digits, ".")
	if hasFrac {
		return sign + groupDigits(whole) + "." + frac
	}
	return sign + groupDigits(whole)
}

// bucketLabel writes a group's value as its time bucket names it: a
// month 2024-01, a quarter 2024 Q1, a year 2024, an hour 2024-01-05
// 13:00; other values as the page shows them.
func bucketLabel(v any, bucket string) string {
	s := cellOf(v, "").Text
	t, err := time.Parse("2006-01-02", s[:min(len(s), 10)])
	if err != nil || bucket == "" {
		return s
	}
	switch bucket {
	case "year":
		return t.Format("2006")
	case "quarter":
		return fmt.Sprintf("%d Q%d", t.Year(), (int(t.Month())+2)/3)
	case "month":
		return t.Format("2006-01")
	case "hour":
		if len(s) >= 16 {
			return s[:10] + " " + s[11:16]
		}
	}
	return s
}
