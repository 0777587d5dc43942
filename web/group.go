package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"math"
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
	"datadesk/tableview"
)

// groupOps and groupBuckets are the measures and the time buckets the
// page's grouping offers.
var groupOps, groupBuckets = tableview.GroupOps, tableview.GroupBuckets

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
		g.Columns = append(g.Columns, pageOp{Value: c.Key, Name: labelOf(c)})
	}
	g.Asked = g.Column != ""
	return g
}

// analysis is the grouping as a files.analyze_table call over the view's
// rows (the view reads the same address).
func (g *pageGroup) analysis(t *catalog.Table, v *tableView, limit int) catalog.Analysis {
	return v.Analysis(limit)
}

// run answers the grouping for the page: up to 50 groups, a chart of
// them, and links to the chart as SVG and the whole grouping as XLSX.
func (g *pageGroup) run(ctx context.Context, store *engine.Store, t *catalog.Table, v *tableView) error {
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
	w := v.Clone()
	w.Offset, w.Summaries, w.Message = 0, nil, ""
	link := w.Href
	g.SVGURL, g.PNGURL, g.XLSXURL = link("/tables/"+t.ID+"/group.svg"), link("/tables/"+t.ID+"/group.png"), link("/tables/"+t.ID+"/group.xlsx")
	return nil
}

func (g *pageGroup) fill(p *catalog.AnalysisPlan, res *catalog.AnalysisResult) {
	g.Head = [2]string{res.Columns[0], measureWords(p)}
	if res.GroupCount != nil {
		g.Groups = *res.GroupCount
	}
	class := "num"
	if !catalog.Numeric(p.OutType(1)) {
		class = "text"
	}
	for _, r := range res.Rows {
		g.Rows = append(g.Rows, [2]pageCell{{Text: bucketLabel(r[0], p.Groups[0].Bucket), Class: "text"}, cellOf(r[1], class)})
	}
	g.Name = g.chartName(p)
	if catalog.Numeric(p.OutType(1)) && len(res.Rows) > 0 {
		g.Chart = template.HTML(svgBars(groupBars(p, res.Rows), g.Name))
	}
}

// groupBars are a grouping's bars, each labelled as its time bucket
// names it (2024-01 for a month).
func groupBars(p *catalog.AnalysisPlan, rows [][]any) []chartBar {
	bars := barsOf(rows, 1, 1)
	for i := range bars {
		bars[i].label = bucketLabel(rows[i][0], p.Groups[0].Bucket)
	}
	return bars
}

// measureWords names a grouping's measure as the analyst chose it: "sum
// of amount", "count of rows".
func measureWords(p *catalog.AnalysisPlan) string {
	m := p.Measures[0]
	if m.Col == nil {
		return tableview.MeasureWords(m.Op, "")
	}
	return tableview.MeasureWords(m.Op, m.Col.Key)
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
		if v.err != nil {
			return h.pageError(c, v.err)
		}
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
			return c.Blob(http.StatusOK, "image/svg+xml", []byte(svgBars(groupBars(p, rows), name)))
		case "png":
			b, err := pngBars(groupBars(p, rows), name)
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
// the measure over the group values beside the data: the measure headed
// as the analyst chose it, time buckets named as such (2024-01), numbers
// and the chart's axis with thousands separated.
func groupWorkbook(p *catalog.AnalysisPlan, rows [][]any, name string) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Sheet1"
	head := p.OutNames()
	if err := f.SetSheetRow(sheet, "A1", &[]any{head[0], measureWords(p)}); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	whole := true
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		label := bucketLabel(r[0], p.Groups[0].Bucket)
		var value any = r[1]
		if n, ok := r[1].(interface{ Float64() (float64, error) }); ok {
			value, _ = n.Float64()
		}
		if x, ok := value.(float64); ok && x != math.Trunc(x) {
			whole = false
		}
		if err := f.SetSheetRow(sheet, cell, &[]any{label, value}); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	numFmt := "#,##0"
	if !whole {
		numFmt = "#,##0.00"
	}
	if len(rows) > 0 && catalog.Numeric(p.OutType(1)) {
		style, err := f.NewStyle(&excelize.Style{CustomNumFmt: &numFmt})
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		last := strconv.Itoa(len(rows) + 1)
		if err := f.SetCellStyle(sheet, "B2", "B"+last, style); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		err = f.AddChart(sheet, "D2", &excelize.Chart{
			Type:   excelize.Col,
			Series: []excelize.ChartSeries{{Name: sheet + "!$B$1", Categories: sheet + "!$A$2:$A$" + last, Values: sheet + "!$B$2:$B$" + last}},
			Title:  excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: name}}},
			Legend: excelize.ChartLegend{Position: "none"},
			YAxis:  excelize.ChartAxis{NumFmt: excelize.ChartNumFmt{CustomNumFmt: numFmt}},
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
