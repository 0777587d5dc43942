package bench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// Markdown renders the report as Markdown tables.
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# datadesk bench\n\n%d rows, each path and its baseline run %d times, interleaved. Machine: %s. Started %s.\n\n",
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
	b.WriteString("\nRatios are datadesk's median time over the baseline's; below 1 is faster. The XLSX export target is\n" +
		"a speed of at least 0.85x the bare writer's, a time ratio of at most 1.18.\n\n")
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

// chart draws each path's ratio to its baseline beside its target.
func chart(rep *Report, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("datadesk vs baselines, %d rows (time ratio, lower is better)", rep.Rows)
	p.Y.Label.Text = "datadesk time / baseline time"
	var ratios, targets plotter.Values
	var names []string
	for i, r := range rep.Results {
		ratios = append(ratios, r.Ratio())
		targets = append(targets, r.Target)
		names = append(names, fmt.Sprintf("%d", i+1))
	}
	w := vg.Points(10)
	bars, err := plotter.NewBarChart(ratios, w)
	if err != nil {
		return err
	}
	bars.Color = color.RGBA{R: 9, G: 105, B: 218, A: 255}
	bars.Offset = -w / 2
	tbars, err := plotter.NewBarChart(targets, w)
	if err != nil {
		return err
	}
	tbars.Color = color.RGBA{R: 200, G: 200, B: 200, A: 255}
	tbars.Offset = w / 2
	p.Add(bars, tbars)
	p.Legend.Add("ratio", bars)
	p.Legend.Add("target (0: none)", tbars)
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Label.Text = "path (numbered as in report.md)"
	return p.Save(vg.Length(max(len(names), 8))*0.6*vg.Inch, 4*vg.Inch, path)
}
