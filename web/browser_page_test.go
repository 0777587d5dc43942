package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk/api/apitest"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"
)

// download clicks sel and returns the bytes of the file the browser saves.
func (b *browserT) download(sel string) []byte {
	b.t.Helper()
	dir := b.t.TempDir()
	done := make(chan string, 1)
	progress := chromedp.Events(b.ctx, browser.DownloadProgress)
	go func() {
		for ev, err := range progress {
			if err != nil {
				return
			}
			if ev.State == browser.DownloadProgressStateCompleted {
				done <- ev.GUID
				return
			}
		}
	}()
	yes := true
	b.do(
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &yes})
			return err
		}),
		chromedp.Click(chromedp.CSS(sel)),
	)
	select {
	case guid := <-done:
		body, err := os.ReadFile(filepath.Join(dir, guid))
		if err != nil {
			b.t.Fatal(err)
		}
		return body
	case <-time.After(30 * time.Second):
		b.t.Fatalf("clicking %s downloaded nothing", sel)
	}
	return nil
}

// readXLSXRows reads a workbook's first sheet as text.
func readXLSXRows(t *testing.T, body []byte) [][]string {
	t.Helper()
	x, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows(x.GetSheetList()[0])
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// eval runs a script in the page and returns its value.
func eval[T any](b *browserT, script string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](script))
	if err != nil {
		b.t.Fatalf("%s: %v", script, err)
	}
	return v
}

// analystRow is one row of the orders the analyst test uploads.
type analystRow struct {
	id, region, team, amount, note string
	cents                          int
}

func analystOrders(n int) []analystRow {
	regions := []string{"North", "south", "East", "West"}
	rows := make([]analystRow, n)
	for i := range rows {
		cents := (i*37%101)*100 + i%100
		note := fmt.Sprintf("n%d", i)
		if i%10 == 0 {
			note = ""
		}
		rows[i] = analystRow{id: fmt.Sprintf("%05d", i), region: regions[i%4], team: []string{"A", "B"}[i/4%2],
			amount: fmt.Sprintf("%d.%02d", cents/100, cents%100), note: note, cents: cents}
	}
	return rows
}

// analystServer is a server where the analyst ana, whose password is
// "correct horse battery", has uploaded analystOrders(300) as orders.csv:
// the server, ana's token, the rows and the file as the upload answered
// it.
func analystServer(t *testing.T) (*apitest.Server, string, []analystRow, map[string]any) {
	t.Helper()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	ana := ts.AddUser("ana", "analyst")
	if err := ts.Users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	orders := analystOrders(300)
	var in strings.Builder
	in.WriteString("id,region,team,amount,note\n")
	for _, r := range orders {
		fmt.Fprintf(&in, "%s,%s,%s,%s,%s\n", r.id, r.region, r.team, r.amount, r.note)
	}
	code, m := ts.Upload(ana, "orders.csv", []byte(in.String()))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	return ts, ana, orders, m["file"].(map[string]any)
}

// TestBrowserAnalyst drives what an analyst reaches for: exporting the
// filtered, sorted view (checked row by row), a mistyped filter shown in
// place, search, a column summary that agrees with files.query_table,
// upload then delete, disabled paging, chart bars labelled by every group
// column, and side panels not clipped at 1,024 and 1,440 px.
func TestBrowserAnalyst(t *testing.T) {
	t.Parallel()
	ts, ana, orders, file := analystServer(t)
	tid := file["table_id"].(string)

	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/tables/" + tid))
	b.signIn("ana")

	t.Run("export of the filtered view", func(t *testing.T) {
		var want [][]string
		for _, r := range orders {
			if r.region == "North" && r.cents >= 5000 {
				want = append(want, []string{r.id, r.region, r.team, r.amount, r.note})
			}
		}
		// Sorted by amount, largest first; ties keep file order.
		sort.SliceStable(want, func(i, j int) bool {
			a, _ := strconv.ParseFloat(want[i][3], 64)
			c, _ := strconv.ParseFloat(want[j][3], 64)
			return a > c
		})
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.region=eq&f.region=NORTH&o.amount=gte&f.amount=50&sort=amount&dir=desc"),
			chromedp.WaitVisible(chromedp.CSS("#total")),
		)
		if got := b.text("#total"); got != strconv.Itoa(len(want)) {
			t.Fatalf("rows matching on screen: %s, want %d", got, len(want))
		}
		body := b.download("#export-csv")
		recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\uFEFF")))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(want)+1 || strings.Join(recs[0], ",") != "id,region,team,amount,note" {
			t.Fatalf("export has %d rows (header %q), want %d", len(recs)-1, recs[0], len(want))
		}
		for i, w := range want {
			if strings.Join(recs[i+1], ",") != strings.Join(w, ",") {
				t.Errorf("export row %d: got %q, want %q", i+1, recs[i+1], w)
			}
		}
		// The XLSX export of the same view holds the same rows.
		x := b.download("#export-xlsx")
		rows := readXLSXRows(t, x)
		if len(rows) != len(want)+1 || rows[1][0] != want[0][0] || rows[len(want)][0] != want[len(want)-1][0] {
			t.Errorf("XLSX export: %d rows, first %q", len(rows), rows[1])
		}
		// One page of results: paging that leads nowhere is disabled.
		for _, id := range []string{"first", "prev", "next", "last"} {
			if eval[bool](b, `document.querySelector("#`+id+`").tagName === "A"`) {
				t.Errorf("#%s is a link on page 1 of 1", id)
			}
		}
	})

	t.Run("filter mistake shown in place", func(t *testing.T) {
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.region=eq&f.region=North"),
			chromedp.WaitVisible(chromedp.CSS("#f-amount")),
			chromedp.SetValue(chromedp.CSS("#o-amount"), "gte"),
			chromedp.SendKeys(chromedp.CSS("#f-amount"), "lots"),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitVisible(chromedp.CSS("#filter-error")),
		)
		if got := b.text("#filter-error"); !strings.Contains(got, "amount") || !strings.Contains(got, `"lots"`) {
			t.Errorf("problem shown: %q", got)
		}
		if got := b.text("#e-amount-0"); !strings.Contains(got, "cannot be read as decimal") {
			t.Errorf("message beside the filter: %q", got)
		}
		if got := b.attr("#f-amount-0", "value"); got != "lots" {
			t.Errorf("the mistyped filter was lost: %q", got)
		}
		if got := b.attr("#f-region-0", "value"); got != "North" {
			t.Errorf("the other filter was lost: %q", got)
		}
		if got := b.text("h1"); got != "orders" {
			t.Errorf("left the table page: h1 %q", got)
		}
	})

	t.Run("range filter, said in words", func(t *testing.T) {
		// amount >= 10 and <= 20 kept the first condition alone; now a
		// column takes several, and between is one of them.
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid),
			chromedp.WaitVisible(chromedp.CSS("#o-amount")),
			chromedp.SetValue(chromedp.CSS("#o-amount"), "between"),
			chromedp.WaitVisible(chromedp.CSS("#t-amount")),
			chromedp.SendKeys(chromedp.CSS("#f-amount"), "10"),
			chromedp.SendKeys(chromedp.CSS("#t-amount"), "20"),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitVisible(chromedp.CSS("#f-amount-0")),
		)
		code, m := ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "filters": []any{
			map[string]any{"column": "amount", "op": "gte", "value": 10}, map[string]any{"column": "amount", "op": "lte", "value": 20}}})
		if code != 200 {
			t.Fatalf("query_table: %d %v", code, m)
		}
		want := fmt.Sprint(m["result"].(map[string]any)["matched_row_count"])
		if got := b.text("#total"); got != want {
			t.Errorf("between 10 and 20: %s rows on the page, the plan %s", got, want)
		}
		if got := b.text("#sentence"); !strings.Contains(got, "rows where amount is between 10 and 20 (of 300).") {
			t.Errorf("the sentence: %q", got)
		}
		// A second condition on the same column, and one on another.
		b.do(
			chromedp.SetValue(chromedp.CSS("#o-amount"), "ne"),
			chromedp.SendKeys(chromedp.CSS("#f-amount"), "15.15"),
			chromedp.SetValue(chromedp.CSS("#o-region"), "eq"),
			chromedp.SendKeys(chromedp.CSS("#f-region"), "north"),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitVisible(chromedp.CSS("#f-amount-1")),
		)
		code, m = ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "filters": []any{
			map[string]any{"column": "amount", "op": "gte", "value": 10}, map[string]any{"column": "amount", "op": "lte", "value": 20},
			map[string]any{"column": "amount", "op": "ne", "value": 15.15}, map[string]any{"column": "region", "op": "eq", "value": "north"}}})
		if code != 200 {
			t.Fatalf("query_table: %d %v", code, m)
		}
		want = fmt.Sprint(m["result"].(map[string]any)["matched_row_count"])
		if got := b.text("#total"); got != want {
			t.Errorf("three conditions: %s rows on the page, the plan %s", got, want)
		}
		if got := b.text("#sentence"); !strings.Contains(got, `where region equals "north" and amount is between 10 and 20 and amount is not 15.15 (of 300)`) {
			t.Errorf("the sentence: %q", got)
		}
		// Nothing matches: the page says which condition is why.
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.amount=gt&f.amount=5000&o.region=eq&f.region=North"),
			chromedp.WaitVisible(chromedp.CSS("#no-match")),
		)
		if got := b.text("#no-match"); !strings.Contains(got, "“amount is more than 5000”: that condition alone matches nothing") {
			t.Errorf("no match: %q", got)
		}
		if got := b.text("#total"); got != "0" {
			t.Errorf("total %q", got)
		}
	})

	t.Run("facet adds a filter", func(t *testing.T) {
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.amount=gte&f.amount=10&summary=region#facet-region"),
			chromedp.WaitVisible(chromedp.CSS("#facet-region-top a.facet")),
		)
		count := b.text("#facet-region-top tbody tr:first-child td.num")
		value := b.text("#facet-region-top tbody tr:first-child a.facet")
		b.do(chromedp.Click(chromedp.CSS("#facet-region-top a.facet")), chromedp.WaitVisible(chromedp.CSS("#f-region-0")))
		if got := b.text("#total"); got != count {
			t.Errorf("the facet %q counted %s rows; the page shows %s", value, count, got)
		}
		if got := b.text("#sentence"); !strings.Contains(got, `region equals "`+value+`" and amount is at least 10`) {
			t.Errorf("the sentence after the facet: %q", got)
		}
	})

	t.Run("range facet of a number column", func(t *testing.T) {
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid+"?summary=amount#facet-amount"),
			chromedp.WaitVisible(chromedp.CSS("#facet-amount-ranges a.facet")),
		)
		n := eval[int](b, `document.querySelectorAll("#facet-amount-ranges tbody tr").length`)
		counts := eval[[]string](b, `[...document.querySelectorAll("#facet-amount-ranges td.num")].map(e => e.textContent.trim())`)
		total := 0
		for _, c := range counts {
			v, _ := strconv.Atoi(c)
			total += v
		}
		if n != 5 || total != 300 {
			t.Errorf("%d ranges counting %d rows, want 5 counting all 300", n, total)
		}
		second := counts[1]
		b.do(chromedp.Click(chromedp.CSS("#facet-amount-ranges tbody tr:nth-child(2) a.facet")), chromedp.WaitVisible(chromedp.CSS("#f-amount-1")))
		if got := b.text("#total"); got != second {
			t.Errorf("the second range counted %s rows; the page shows %s", second, got)
		}
	})

	t.Run("search across text columns", func(t *testing.T) {
		want := 0
		for _, r := range orders {
			if strings.Contains(strings.ToLower(r.id+"|"+r.region+"|"+r.team+"|"+r.note), "n29") {
				want++
			}
		}
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid),
			chromedp.WaitVisible(chromedp.CSS("#q")),
			chromedp.SendKeys(chromedp.CSS("#q"), "N29"),
			chromedp.Click(chromedp.CSS("#search")),
			chromedp.WaitVisible(chromedp.CSS(`#q[value="N29"]`)),
		)
		if got := b.waitText("#total", strconv.Itoa(want)); got != strconv.Itoa(want) {
			t.Errorf("search matched %s rows, want %d", got, want)
		}
	})

	t.Run("column summary matches query_table", func(t *testing.T) {
		b.do(
			chromedp.Navigate(ts.URL+"/tables/"+tid),
			chromedp.WaitVisible(chromedp.CSS("#summary-note")),
			chromedp.Click(chromedp.CSS("#summary-note")),
			chromedp.WaitVisible(chromedp.CSS("#facet-note")),
		)
		code, m := ts.Call(ana, "files.query_table", map[string]any{"file_id": tid,
			"aggregates": []any{map[string]any{"op": "count"}, map[string]any{"op": "count", "column": "note", "name": "values"}}})
		if code != 200 {
			t.Fatalf("query_table: %d %v", code, m)
		}
		agg := m["result"].(map[string]any)["aggregates"].(map[string]any)
		rows, values := agg["count"].(float64), agg["values"].(float64)
		code, m = ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "group_by": []any{"note"},
			"filters": []any{map[string]any{"column": "note", "op": "is_null", "value": false}}})
		if code != 200 {
			t.Fatalf("query_table: %d %v", code, m)
		}
		distinct := m["result"].(map[string]any)["group_count"].(float64)
		for sel, want := range map[string]string{
			"#facet-note-rows": fmt.Sprint(rows), "#facet-note-nulls": fmt.Sprint(rows - values), "#facet-note-distinct": fmt.Sprint(distinct),
			"#facet-note-min": "n1", "#facet-note-max": "n99",
		} {
			if got := b.text(sel); got != want {
				t.Errorf("%s: got %q, want %q (query_table)", sel, got, want)
			}
		}
		code, m = ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "group_by": []any{"region"},
			"sort_by": "count", "direction": "desc"})
		if code != 200 {
			t.Fatalf("query_table: %d %v", code, m)
		}
		// A second summary stands beside the first.
		b.do(chromedp.Click(chromedp.CSS("#summary-region")), chromedp.WaitVisible(chromedp.CSS("#facet-region-top")))
		if got := b.waitText("#facet-region-title", "Summary of region"); got != "Summary of region" {
			t.Fatalf("summary title %q", got)
		}
		if got := b.text("#facet-note-title"); got != "Summary of note" {
			t.Errorf("the first summary after opening a second: %q", got)
		}
		var qt []string
		for _, r := range m["result"].(map[string]any)["rows"].([]any) {
			qt = append(qt, fmt.Sprintf("%v %v", r.([]any)[0], r.([]any)[1]))
		}
		shown := eval[[]string](b, `[...document.querySelectorAll("#facet-region-top tbody tr")].map(r => r.cells[0].textContent + " " + r.cells[1].textContent)`)
		if strings.Join(shown, "; ") != strings.Join(qt, "; ") {
			t.Errorf("top values %q, query_table says %q", shown, qt)
		}
	})

	t.Run("side panels not clipped", func(t *testing.T) {
		body := `{"title":"Orders by region and team, a title long enough to wrap over several lines","caption":"Amounts in euros; every region's sales team reports weekly, and this caption is long on purpose.","columns":{"amount":"Order amount in euros, including VAT"},"notes":["A note with a long word: Donaudampfschifffahrtsgesellschaftskapitänswitwe"]}`
		if code, m, _ := ts.Do("PUT", "/v1/tables/"+tid+"/labels", ana, strings.NewReader(body), "application/json"); code != 200 {
			t.Fatalf("labels: %d %v", code, m)
		}
		for _, w := range screenshotWidths {
			b.do(
				chromedp.EmulateViewport(w, 900),
				chromedp.Navigate(ts.URL+"/tables/"+tid+"?summary=amount"),
				chromedp.WaitVisible(chromedp.CSS(".labels")),
			)
			for _, sel := range []string{".labels", ".summary"} {
				fits := eval[bool](b, `(() => { const e = document.querySelector("`+sel+`"); const r = e.getBoundingClientRect();
					return r.left >= 0 && r.right <= document.documentElement.clientWidth && e.scrollWidth <= e.clientWidth; })()`)
				if !fits {
					t.Errorf("at %d px, %s is clipped or off screen", w, sel)
				}
			}
			if eval[bool](b, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
				t.Errorf("at %d px the page scrolls sideways", w)
			}
			// The header row stays in view when the grid scrolls.
			stuck := eval[bool](b, `(() => { const w = document.querySelector(".grid-wrap"); w.scrollTop = 400;
				const h = document.querySelector(".grid thead").getBoundingClientRect();
				return w.scrollTop > 0 && Math.abs(h.top - w.getBoundingClientRect().top) < 3; })()`)
			if !stuck {
				t.Errorf("at %d px the header scrolled away with the rows", w)
			}
		}
		b.do(chromedp.EmulateViewport(1400, 1000))
	})

	t.Run("chart bars labelled by every group column", func(t *testing.T) {
		code, m := ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "show": true, "group_by": []any{"region", "team"},
			"aggregates": []any{map[string]any{"op": "sum", "column": "amount", "name": "total"}}})
		if code != 200 {
			t.Fatalf("grouped view: %d %v", code, m)
		}
		vid := m["result"].(map[string]any)["view"].(map[string]any)["table_id"].(string)
		b.do(chromedp.Navigate(ts.URL+"/tables/"+vid), chromedp.WaitVisible(chromedp.CSS(".chart")))
		labels := eval[[]string](b, `[...document.querySelectorAll(".chart .bar-label")].map(e => e.textContent)`)
		if len(labels) != 8 || labels[0] != "East · A" || labels[1] != "East · B" {
			t.Errorf("bar labels %q, want every region and team", labels)
		}
	})

	t.Run("upload then delete", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "targets.csv")
		content := "region,target\nNorth,100\nsouth,200\n"
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b.do(
			chromedp.Navigate(ts.URL+"/files"),
			chromedp.WaitVisible(chromedp.CSS("#upload")),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
			chromedp.Click(chromedp.CSS("#upload-button")),
			chromedp.WaitVisible(chromedp.CSS(".message")),
		)
		if got := b.text(".message"); !strings.Contains(got, "Uploaded targets.csv") {
			t.Fatalf("after upload: %q", got)
		}
		_, lm, _ := ts.Do("GET", "/v1/files", ana, nil, "")
		var id string
		for _, f := range lm["files"].([]any) {
			if f.(map[string]any)["filename"] == "targets.csv" {
				id = f.(map[string]any)["id"].(string)
			}
		}
		if id == "" {
			t.Fatalf("the upload is not among the files: %v", lm)
		}
		if got := b.text("#file-" + id + " .kind"); got != "CSV table" {
			t.Errorf("kind %q, want CSV table", got)
		}
		if got, want := b.text("#file-"+id+" .size"), fmt.Sprintf("%d bytes", len(content)); got != want {
			t.Errorf("size %q, want %s", got, want)
		}
		if got := b.text("#file-" + file["id"].(string) + " .kind"); got != "CSV table" {
			t.Errorf("orders kind %q", got)
		}
		b.do(
			chromedp.Click(chromedp.CSS("#file-"+id+" .delete-button")),
			chromedp.WaitNotPresent(chromedp.CSS("#file-"+id)),
		)
		if got := b.text(".message"); got != "Deleted targets.csv." {
			t.Errorf("after delete: %q", got)
		}
		if code, _, _ := ts.Do("GET", "/v1/files/"+id, ana, nil, ""); code != 404 {
			t.Errorf("the deleted file answers %d, want 404", code)
		}
	})
}
