package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"datadesk/internal/testenv"
	"datadesk/web"
)

// TestBrowserGroupAndChart: the page could not group. It now groups the
// rows its filters keep by a column or a date bucket with one measure,
// through files.analyze_table's plan (the same groups and values), shows
// them with a chart that has an accessible name, gives the chart as SVG,
// and the whole grouping as an XLSX whose native chart references the
// data (read back with openpyxl).
func TestBrowserGroupAndChart(t *testing.T) {
	t.Parallel()
	ts, ana, _, file := analystServer(t)
	tid := file["table_id"].(string)
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	b.do(
		chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.amount=gte&f.amount=10"),
		chromedp.WaitVisible(chromedp.CSS("#group summary")),
		chromedp.Click(chromedp.CSS("#group summary")),
		chromedp.WaitVisible(chromedp.CSS("#gm")),
		chromedp.SetValue(chromedp.CSS("#gm"), "sum"),
		chromedp.SetValue(chromedp.CSS("#gc"), "amount"),
		chromedp.SetValue(chromedp.CSS("#g"), "region"),
		chromedp.Click(chromedp.CSS("#group-button")),
		chromedp.WaitVisible(chromedp.CSS("#group-table")),
	)
	code, res := ts.Call(ana, "files.analyze_table", map[string]any{"file_id": tid, "group_by": []any{"region"},
		"filters":  []any{map[string]any{"column": "amount", "op": "gte", "value": 10}},
		"measures": []any{map[string]any{"op": "sum", "column": "amount", "name": "value"}}, "sort_by": "value", "direction": "desc"})
	if code != 200 {
		t.Fatalf("analyze: %d %v", code, res)
	}
	var want []string
	for _, r := range res["result"].(map[string]any)["rows"].([]any) {
		cells := r.([]any)
		want = append(want, fmt.Sprintf("%v %v", cells[0], web.ShownNumber(fmt.Sprint(cells[1]))))
	}
	got := eval[[]string](b, `[...document.querySelectorAll("#group-table tbody tr")].map(r => [...r.cells].map(c => c.textContent.trim()).join(" "))`)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the page's groups %q, files.analyze_table's %q", got, want)
	}
	if name := b.attr("#group-chart svg", "aria-label"); name != "Bar chart of the sum of amount by region" {
		t.Errorf("the chart's name: %q", name)
	}
	// The filters stayed.
	if v := b.attr("#f-amount-0", "value"); v != "10" {
		t.Errorf("the filter after grouping: %q", v)
	}
	svg := b.download("#group-svg")
	if !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), `aria-label="Bar chart of the sum of amount by region"`) {
		t.Errorf("the chart as SVG: %.200s", svg)
	}
	if img := b.download("#group-png"); !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Errorf("the chart as PNG: %.20q", img)
	} else if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width != 720 {
		t.Errorf("the PNG: %+v %v", cfg, err)
	}
	x := b.download("#group-xlsx")
	rows := readXLSXRows(t, x)
	if len(rows) != len(want)+1 || rows[0][0] != "region" {
		t.Errorf("the grouping's XLSX: %q", rows)
	}
	py := openpyxlPython()
	if py == "" {
		testenv.Missing(t, "no python3 with openpyxl")
	}
	path := filepath.Join(t.TempDir(), "grouped.xlsx")
	if err := os.WriteFile(path, x, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", `
import json, sys, openpyxl
ws = openpyxl.load_workbook(sys.argv[1]).worksheets[0]
out = []
for c in ws._charts:
    for s in c.series:
        cat = s.cat.strRef or s.cat.numRef
        out.append([s.val.numRef.f, cat.f])
print(json.dumps(out))
`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("openpyxl: %v %s", err, out)
	}
	var charts [][]string
	if err := json.Unmarshal(out, &charts); err != nil {
		t.Fatalf("openpyxl's answer %s: %v", out, err)
	}
	last := fmt.Sprint(len(want) + 1)
	if len(charts) != 1 || charts[0][0] != "'Sheet1'!$B$2:$B$"+last && charts[0][0] != "Sheet1!$B$2:$B$"+last ||
		!strings.HasSuffix(charts[0][1], "$A$2:$A$"+last) {
		t.Errorf("the XLSX's chart, as openpyxl reads it: %q", charts)
	}
}
