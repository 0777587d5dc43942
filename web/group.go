package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v5"
	"github.com/xuri/excelize/v2"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/rbac"
)

// groupOps are the measures the page's grouping offers.
var groupOps = []pageOp{{"count", "count of rows"}, {"sum", "sum of"}, {"avg", "average of"}, {"min", "smallest"}, {"max", "largest"},
	{"count_distinct", "distinct values of"}}

// groupBuckets are the time buckets a date or timestamp group takes.
var groupBuckets = []pageOp{{"", "each value"}, {"year", "by year"}, {"quarter", "by quarter"}, {"month", "by month"}, {"week", "by week"},
	{"day", "by day"}, {"hour", "by hour"}}

// maxGroupExport bounds the groups an XLSX of a grouping holds.
const maxGroupExport = catalog.MaxAnalysisExport

// pageGroup is a table page's grouping: the rows its filters keep
// grouped by a column (or a date bucket) with one measure, through the
// plan files.analyze_table uses.
type pageGroup struct {
	Column, Bucket, Op, Of string
	Ops, Buckets           []pageOp
	Columns                []pageOp
	// Asked: a grouping was asked for; then the answer, or Problem.
	Asked                   bool
	Problem                 string
	Head                    [2]string
	Rows                    [][2]pageCell
	Groups                  int64
	Chart                   template.HTML
	Name                    string
	SVGURL, PNGURL, XLSXURL string
}

// groupOf reads a page's grouping from its address: g (the column), gb
// (its bucket), gm (the measure) and gc (the measure's column).
func groupOf(t *catalog.Table, q url.Values) *pageGroup {
	g := &pageGroup{Column: q.Get("g"), Bucket: q.Get("gb"), Op: q.Get("gm"), Of: q.Get("gc"), Ops: groupOps, Buckets: groupBuckets}
	if g.Op == "" {
		g.Op = "count"
	}
	for _, c := range t.Columns {
		g.Columns = append(g.Columns, pageOp{c.Key, labelOf(c)})
	}
	g.Asked = g.Column != ""
	return g
}

// analysis is the grouping as a files.analyze_table call over the view's
// rows: its conditions, and its search as any text column containing it.
func (g *pageGroup) analysis(t *catalog.Table, v *tableView, limit int) catalog.Analysis {
	a := catalog.Analysis{FileID: t.ID, GroupBy: []catalog.GroupBy{{Column: g.Column, Bucket: g.Bucket}}, Limit: limit, Filters: v.analysisFilters(t)}
	m := catalog.Measure{Op: g.Op, Name: "value"}
	if g.Op != "count" {
		m.Column = g.Of
	}
	a.Measures = []catalog.Measure{m}
	a.SortBy, a.Direction = "value", "desc"
	if g.Bucket != "" {
		a.SortBy, a.Direction = "", ""
	}
	return a
}

// analysisFilters are the view's filters and search as an analysis's:
// the search, any text column containing it.
func (v *tableView) analysisFilters(t *catalog.Table) []catalog.FilterNode {
	var out []catalog.FilterNode
	for _, f := range v.Filters {
		out = append(out, catalog.FilterNode{Column: f.Column, Op: f.Op, Value: f.Value})
	}
	if v.Search != "" {
		var any []catalog.FilterNode
		for _, c := range t.Columns {
			if c.Type == "text" {
				any = append(any, catalog.FilterNode{Column: c.Key, Op: "contains", Value: v.Search})
			}
		}
		if len(any) > 0 {
			out = append(out, catalog.FilterNode{Any: any})
		}
	}
	return out
}

// run answers the grouping for the page: up to 50 groups, a chart of
// them, and links to the chart as SVG and the whole grouping as XLSX.
func (g *pageGroup) run(ctx context.Context, store *engine.Store, t *catalog.Table, v *tableView, q url.Values) error {
	p, err := store.PlanAnalysis(ctx, g.analysis(t, v, catalog.MaxAnalysisPage))
	if err == nil {
		var res *catalog.AnalysisResult
		if res, err = store.Analyze(ctx, p); err == nil {
			g.fill(p, res)
		}
	}
	if datadesk.ErrorCode(err) == datadesk.Invalid {
		g.Problem = "The grouping cannot be made: " + datadesk.AsError(err).Message + "."
		return nil
	}
	if err != nil {
		return err
	}
	link := func(path string) string {
		return path + "?" + copyAddress(q, "offset", "summary", noteParam, noteSigParam).Encode()
	}
	g.SVGURL, g.PNGURL, g.XLSXURL = link("/tables/"+t.ID+"/group.svg"), link("/tables/"+t.ID+"/group.png"), link("/tables/"+t.ID+"/group.xlsx")
	return nil
}

func (g *pageGroup) fill(p *catalog.AnalysisPlan, res *catalog.AnalysisResult) {
	g.Head = [2]string{res.Columns[0], res.Columns[1]}
	if res.GroupCount != nil {
		g.Groups = *res.GroupCount
	}
	class := "num"
	if !catalog.Numeric(p.OutType(1)) {
		class = "text"
	}
	for _, r := range res.Rows {
		g.Rows = append(g.Rows, [2]pageCell{cellOf(r[0], "text"), cellOf(r[1], class)})
	}
	g.Name = g.chartName(p)
	if catalog.Numeric(p.OutType(1)) && len(res.Rows) > 0 {
		g.Chart = template.HTML(svgBars(barsOf(res.Rows, 1, 1), g.Name))
	}
}

// chartName says what the chart shows: "Bar chart of the sum of amount by
// region".
func (g *pageGroup) chartName(p *catalog.AnalysisPlan) string {
	what := "the count of rows"
	if g.Op != "count" {
		what = "the " + map[string]string{"sum": "sum", "avg": "average", "min": "smallest", "max": "largest", "count_distinct": "distinct values"}[g.Op] +
			" of " + g.Of
	}
	by := p.Groups[0].Col.Key
	if g.Bucket != "" {
		by += " by " + g.Bucket
	}
	return "Bar chart of " + what + " by " + by
}

// GroupFile answers the page's grouping as a file: the chart as SVG, or
// every group as an XLSX with a native Excel chart beside the data.
func (h *Handler) GroupFile(format string) echo.HandlerFunc {
	return func(c *echo.Context) error {
		store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
		if err != nil {
			return h.pageError(c, err)
		}
		defer release()
		ctx := c.Request().Context()
		q := c.Request().URL.Query()
		v, g := viewOf(t, q), groupOf(t, q)
		if !g.Asked {
			return h.pageError(c, datadesk.Errorf(datadesk.Invalid, "no grouping asked: g names the column to group by").WithField("g"))
		}
		// One pass: the chart's groups, or every group the XLSX holds.
		p, err := store.PlanAnalysis(ctx, g.analysis(t, v, catalog.MaxAnalysisPage))
		if err != nil {
			return h.pageError(c, err)
		}
		if format == "xlsx" {
			p = p.ForExport(maxGroupExport)
		}
		res, err := store.Analyze(ctx, p)
		if err != nil {
			return h.pageError(c, err)
		}
		rows := res.Rows
		name := g.chartName(p)
		switch format {
		case "svg":
			c.Response().Header().Set("Content-Disposition", exports.ContentDisposition(t.Name+" chart.svg"))
			return c.Blob(http.StatusOK, "image/svg+xml", []byte(svgBars(barsOf(rows, 1, 1), name)))
		case "png":
			b, err := pngBars(barsOf(rows, 1, 1), name)
			if err != nil {
				return h.pageError(c, err)
			}
			c.Response().Header().Set("Content-Disposition", exports.ContentDisposition(t.Name+" chart.png"))
			return c.Blob(http.StatusOK, "image/png", b)
		}
		b, err := groupWorkbook(p, rows, name)
		if err != nil {
			return h.pageError(c, err)
		}
		c.Response().Header().Set("Content-Disposition", exports.ContentDisposition(t.Name+" grouped.xlsx"))
		return c.Blob(http.StatusOK, exports.MediaTypes["xlsx"], b)
	}
}

// groupWorkbook writes groups as a sheet with a native column chart of
// the measure over the group values beside the data.
func groupWorkbook(p *catalog.AnalysisPlan, rows [][]any, name string) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Sheet1"
	head := p.OutNames()
	if err := f.SetSheetRow(sheet, "A1", &[]any{head[0], head[1]}); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		label := cellOf(r[0], "").Text
		var value any = r[1]
		if n, ok := r[1].(interface{ Float64() (float64, error) }); ok {
			value, _ = n.Float64()
		}
		if err := f.SetSheetRow(sheet, cell, &[]any{label, value}); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	if len(rows) > 0 && catalog.Numeric(p.OutType(1)) {
		last := strconv.Itoa(len(rows) + 1)
		err := f.AddChart(sheet, "D2", &excelize.Chart{
			Type:   excelize.Col,
			Series: []excelize.ChartSeries{{Name: sheet + "!$B$1", Categories: sheet + "!$A$2:$A$" + last, Values: sheet + "!$B$2:$B$" + last}},
			Title:  excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: name}}},
			Legend: excelize.ChartLegend{Position: "none"},
		})
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return b.Bytes(), nil
}
