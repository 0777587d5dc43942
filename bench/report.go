package bench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// Markdown renders the report as Markdown tables.
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# datadesk-bench\n\n%d rows, each path and its baseline run %d times, interleaved. Machine: %s. Started %s.\n\n",
		rep.Rows, rep.Repeat, rep.Machine, rep.StartedAt.Format(time.RFC3339))
	b.WriteString("| # | path | baseline | baseline median | datadesk median | datadesk spread | ratio | target | | peak MiB (baseline / datadesk) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rep.Results {
		lo, hi := r.Subject.Spread()
		target, verdict := "", ""
		if r.Target > 0 {
			target = fmt.Sprintf("≤ %.2f", r.Target)
			verdict = "met"
			if !r.Met() {
				verdict = "**missed**"
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s – %s | %.2f | %s | %s | %.0f / %.0f |\n", i+1, r.Name, r.Baseline, ms(r.Base.Median()),
			ms(r.Subject.Median()), ms(lo), ms(hi), r.Ratio(), target, verdict, r.Base.PeakMiB, r.Subject.PeakMiB)
	}
	b.WriteString("\nRatios are datadesk's median time over the baseline's, or for a path run in turns the median of its\n" +
		"samples' own ratios; below 1 is faster. Peak memory of a Node baseline is its own process's.\n\n")
	for _, r := range rep.Results {
		if r.Note != "" {
			fmt.Fprintf(&b, "- %s: %s\n", r.Name, r.Note)
		}
	}
	for _, m := range rep.Memory {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	if len(rep.HTTP) == 0 {
		return b.String()
	}
	b.WriteString("\n## Tool calls over HTTP on loopback\n\n| callers | calls | p50 | p99 | calls/s |\n|---|---|---|---|---|\n")
	for _, h := range rep.HTTP {
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %.0f |\n", h.Callers, h.Calls, ms(h.P50), ms(h.P99), h.Throughput)
	}
	if len(rep.Nodes) == 0 {
		return b.String()
	}
	b.WriteString("\n## Tool calls through HAProxy, one node and two\n\nEach owner calls files.query_table (a group-by with two aggregates) on their own\n" +
		"tenth-size table; the proxy routes each owner to their node. The nodes share this machine's cores.\n\n" +
		"| nodes | owners | callers | calls | p50 | p99 | calls/s |\n|---|---|---|---|---|---|---|\n")
	for _, n := range rep.Nodes {
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %s | %s | %.0f |\n", n.Nodes, n.Owners, n.Callers, n.Calls, ms(n.P50), ms(n.P99), n.Throughput)
	}
	return b.String()
}

// writeReport writes report.md, report.json and chart.png into dir.
func writeReport(rep *Report, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "report.json"), rep); err != nil {
		return err
	}
	return chart(rep, filepath.Join(dir, "chart.png"))
}

// writeJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, js, 0o644)
}

// chart draws each path's time ratio to its baseline as a horizontal bar
// named by the path and its baseline, on a log scale (so 0.5x and 2x lie
// as far from 1x, and a 4x path does not flatten a 0.9x one), with a line
// at 1x and the path's target as a mark across its bar.
func chart(rep *Report, path string) error {
	n := len(rep.Results)
	if n == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("datadesk vs its baselines, %d rows", rep.Rows)
	p.X.Label.Text = "datadesk time / baseline time, log scale (left of 1x: faster; red mark: the target, at most)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	ratios := make([]float64, n)
	names := make([]string, n)
	lo, hi := 1.0, 1.0
	for i, r := range rep.Results {
		// The first path at the top.
		j := n - 1 - i
		ratios[j] = max(r.Ratio(), 0.01)
		names[j] = r.Name + "\nvs " + r.Baseline
		lo, hi = min(lo, ratios[j]), max(hi, ratios[j], r.Target)
		if r.Target > 0 {
			lo = min(lo, r.Target)
		}
	}
	bars := ratioBars{ratios: ratios, from: lo / 1.5, color: color.RGBA{R: 9, G: 105, B: 218, A: 255}}
	p.Add(bars)
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(n) - 0.5}})
	if err != nil {
		return err
	}
	one.Color = color.Gray{Y: 90}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(one)
	var marks plotter.XYs
	for i, r := range rep.Results {
		if r.Target > 0 {
			marks = append(marks, plotter.XY{X: r.Target, Y: float64(n - 1 - i)})
		}
	}
	if len(marks) > 0 {
		targets, err := plotter.NewScatter(marks)
		if err != nil {
			return err
		}
		targets.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{R: 207, G: 34, B: 46, A: 255}, Radius: vg.Points(8), Shape: lineGlyph{}}
		p.Add(targets)
	}
	var at plotter.XYs
	var texts []string
	for i, r := range ratios {
		at = append(at, plotter.XY{X: r, Y: float64(i)})
		texts = append(texts, fmt.Sprintf(" %.2fx", r))
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: texts})
	if err != nil {
		return err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(labels)
	p.NominalY(names...)
	p.X.Min, p.X.Max = lo/1.5, hi*1.8
	return p.Save(9*vg.Inch, vg.Length(n)*0.45*vg.Inch+1.2*vg.Inch, path)
}

// ratioBars draws horizontal bars from the axis's start to each ratio, at
// y 0, 1, ...: bars on a log scale cannot start at 0.
type ratioBars struct {
	ratios []float64
	from   float64
	color  color.Color
}

func (b ratioBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	c.SetColor(b.color)
	half := vg.Points(7)
	for i, r := range b.ratios {
		y := trY(float64(i))
		var path vg.Path
		path.Move(vg.Point{X: trX(b.from), Y: y - half})
		path.Line(vg.Point{X: trX(r), Y: y - half})
		path.Line(vg.Point{X: trX(r), Y: y + half})
		path.Line(vg.Point{X: trX(b.from), Y: y + half})
		path.Close()
		c.Fill(path)
	}
}

func (b ratioBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = b.from, b.from
	for _, r := range b.ratios {
		xmax = max(xmax, r)
	}
	return xmin, xmax, -0.5, float64(len(b.ratios)) - 0.5
}

func (b ratioBars) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.color)
	var path vg.Path
	path.Move(vg.Point{X: c.Min.X, Y: c.Min.Y})
	path.Line(vg.Point{X: c.Max.X, Y: c.Min.Y})
	path.Line(vg.Point{X: c.Max.X, Y: c.Max.Y})
	path.Line(vg.Point{X: c.Min.X, Y: c.Max.Y})
	path.Close()
	c.Fill(path)
}

// ratioTicks marks a log axis at 0.1, 0.2, 0.5, 1, 2, 5, 10 ..., labelled
// as ratios.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for scale := 0.01; scale <= 1000; scale *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * scale
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64) + "x"})
			}
		}
	}
	return ticks
}

// lineGlyph is a short vertical line: a target across its bar.
type lineGlyph struct{}

func (lineGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2.5)})
	var path vg.Path
	path.Move(vg.Point{X: pt.X, Y: pt.Y - sty.Radius})
	path.Line(vg.Point{X: pt.X, Y: pt.Y + sty.Radius})
	c.Stroke(path)
}
