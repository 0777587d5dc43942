package web_test

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk/api/apitest"

	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"
)

// wideOrders is a table wider than any window (ten columns, long notes)
// and deep enough that its middle pages are read from its stored order:
// more than twice ducksql.PageReach rows.
func wideOrders(n int) (header []string, rows [][]string) {
	header = []string{"order_id", "customer_zip", "region", "category", "quantity", "amount", "order_date", "note", "channel", "warehouse_location_code"}
	regions := []string{"North", "South", "East", "West"}
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(730))
		rows = append(rows, []string{fmt.Sprintf("%08d", i), fmt.Sprintf("%05d", r.IntN(99999)), regions[r.IntN(4)],
			[]string{"books", "toys", "garden", "music"}[r.IntN(4)], strconv.Itoa(1 + r.IntN(20)), fmt.Sprintf("%d.%02d", r.IntN(5000), r.IntN(100)),
			day.Format("2006-01-02"), fmt.Sprintf("express_delivery_requested_by_customer_service_ticket_%06d", r.IntN(1000000)),
			[]string{"web", "phone", "shop"}[r.IntN(3)], fmt.Sprintf("WAREHOUSE_%03d_%s", r.IntN(40), []string{"NORTH_ANNEX_LOADING_BAY", "MAIN_FLOOR_SECTION_B"}[r.IntN(2)])})
	}
	return header, rows
}

// fetchJSON fetches u from the page the browser shows, with its cookie,
// and returns the status and the JSON answer.
func (b *browserT) fetchJSON(u string) (int, map[string]any) {
	b.t.Helper()
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`fetch(`+strconv.Quote(u)+`).then(async r => JSON.stringify({status: r.status, body: await r.json()}))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("fetch %s: %v", u, err)
	}
	var got struct {
		Status int            `json:"status"`
		Body   map[string]any `json:"body"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		b.t.Fatal(err)
	}
	return got.Status, got.Body
}

// shownKeys are the keys of the columns the grid shows, in order.
func (b *browserT) shownKeys() []string {
	b.t.Helper()
	return eval[[]string](b, `[...document.querySelectorAll("#grid thead a.sort")].map(a => a.id.slice(5))`)
}

// firstColumn is the text of the grid's first column, row by row.
func (b *browserT) firstColumn() []string {
	b.t.Helper()
	return eval[[]string](b, `[...document.querySelectorAll("#grid tbody tr")].map(r => r.cells[0].textContent.trim())`)
}

func number(s string) string { return strings.ReplaceAll(s, ",", "") }

// TestBrowserViewAddress drives what the page's address holds, in a
// real browser, on a table of ten columns and 24,000 rows: the rows API
// answers the page's own parameters with the page's rows and refuses
// others; summaries stand side by side; every column's filter is in
// reach at 1,400 and 400 px while the grid scrolls sideways; the columns
// chosen are kept in the address, a saved view and an export; a filter
// of three conditions has a short address; a deep sorted page holds the
// rows files.query_table gives; a grouping by month is labelled by month
// with thousands separated.
func TestBrowserViewAddress(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 16 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	header, rows := wideOrders(24000)
	var in strings.Builder
	w := csv.NewWriter(&in)
	w.Write(header)
	w.WriteAll(rows)
	code, m := ts.Upload(ana, "orders.csv", []byte(in.String()))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	tid := m["file"].(map[string]any)["table_id"].(string)
	page := ts.URL + "/tables/" + tid
	b := newBrowser(t)
	b.do(chromedp.Navigate(page))
	b.signIn("ana")

	t.Run("the rows API answers the page's address", func(t *testing.T) {
		for _, q := range []string{
			"?o.region=eq&f.region=North",
			"?q=annex&sort=amount&dir=desc",
			"?o.amount=between&f.amount=100&t.amount=900&o.order_date=gte&f.order_date=2021-01-01&hide=note",
			"?o.category=in&f.category=toys,books&col=order_id&col=amount&col=region&summary=region&g=region&gm=sum&gc=amount",
			"?sort=amount&offset=12000",
		} {
			b.do(chromedp.Navigate(page+q), chromedp.WaitVisible(chromedp.CSS("#total")))
			total, ids, keys := number(b.text("#total")), b.firstColumn(), b.shownKeys()
			status, ans := b.fetchJSON(b.attr("#json", "href"))
			if status != 200 {
				t.Fatalf("%s: the JSON twin answered %d %v", q, status, ans)
			}
			var jsonKeys, jsonIDs []string
			for _, c := range ans["columns"].([]any) {
				jsonKeys = append(jsonKeys, c.(map[string]any)["key"].(string))
			}
			for _, r := range ans["rows"].([]any) {
				jsonIDs = append(jsonIDs, fmt.Sprint(r.([]any)[0]))
			}
			if fmt.Sprint(ans["total"]) != total || !slices.Equal(jsonKeys, keys) || !slices.Equal(jsonIDs, ids) {
				t.Errorf("%s: the page shows %s rows of %v (%v), its JSON twin %v of %v (%v)", q, total, keys, ids[:min(3, len(ids))],
					ans["total"], jsonKeys, jsonIDs[:min(3, len(jsonIDs))])
			}
			if strings.Contains(q, "g=region") {
				groups := ans["groups"].(map[string]any)
				if got := b.text("#group-count"); !strings.HasPrefix(got, fmt.Sprint(groups["group_count"])+" groups") {
					t.Errorf("%s: the page's groups %q, the JSON's %v", q, got, groups["group_count"])
				}
				top := ans["summaries"].([]any)[0].(map[string]any)["top"].([]any)[0].(map[string]any)
				if got := number(b.text("#facet-region-top tbody tr:first-child td.num")); got != fmt.Sprint(top["count"]) {
					t.Errorf("%s: the page's first facet counts %s, the JSON's %v", q, got, top["count"])
				}
			}
		}
		// What the API does not take answers 400, naming it, never every row.
		for _, tc := range []struct{ q, field string }{
			{"?o.region=eq&f.region=North&colour=red", "colour"},
			{"?o.region=eq", "f.region"},
			{"?o.amount=starts_with&f.amount=1", "o.amount"},
		} {
			status, ans := b.fetchJSON("/v1/tables/" + tid + "/rows" + tc.q)
			e, _ := ans["error"].(map[string]any)
			if status != 400 || e["field"] != tc.field || e["code"] != "invalid" {
				t.Errorf("%s: %d %v, want 400 naming %s", tc.q, status, ans, tc.field)
			}
		}
		b.do(chromedp.Navigate(page+"?o.region=eq&f.region=North&colour=red"), chromedp.WaitVisible(chromedp.CSS("#filter-error")))
		if got := b.text("#filter-error"); !strings.Contains(got, `"colour"`) {
			t.Errorf("the page of an unknown parameter says %q", got)
		}
		if n := len(b.firstColumn()); n != 0 {
			t.Errorf("the page of an unknown parameter shows %d rows, want none", n)
		}
	})

	t.Run("two summaries side by side", func(t *testing.T) {
		b.do(
			chromedp.Navigate(page+"?o.amount=gte&f.amount=100&summary=region"),
			chromedp.WaitVisible(chromedp.CSS("#facet-region")),
			chromedp.Click(chromedp.CSS("#panel-summary-category")),
			chromedp.WaitVisible(chromedp.CSS("#facet-category")),
			chromedp.WaitVisible(chromedp.CSS("#facet-region")),
		)
		total := number(b.text("#total"))
		for _, key := range []string{"region", "category"} {
			counts := eval[[]string](b, `[...document.querySelectorAll("#facet-`+key+`-top td.num")].map(e => e.textContent)`)
			sum := 0
			for _, c := range counts {
				n, _ := strconv.Atoi(number(c))
				sum += n
			}
			if strconv.Itoa(sum) != total {
				t.Errorf("the %s summary counts %d rows, the page %s", key, sum, total)
			}
		}
		if !eval[bool](b, `(() => { const a = document.querySelector("#facet-region").getBoundingClientRect(), c = document.querySelector("#facet-category").getBoundingClientRect();
			return Math.abs(a.top - c.top) < 2 && c.left >= a.right; })()`) {
			t.Errorf("the two summaries are not side by side at 1,400 px")
		}
		want := number(b.text("#facet-category-top tbody tr:first-child td.num"))
		value := b.text("#facet-category-top tbody tr:first-child a.facet")
		b.do(chromedp.Click(chromedp.CSS("#facet-category-top tbody tr:first-child a.facet")), chromedp.WaitVisible(chromedp.CSS("#f-category-0")))
		if got := number(b.text("#total")); got != want {
			t.Errorf("the facet %s counted %s rows; the page shows %s", value, want, got)
		}
		u, _ := url.Parse(eval[string](b, `location.href`))
		if s := u.Query()["summary"]; !slices.Equal(s, []string{"region", "category"}) {
			t.Errorf("the summaries kept in the address: %q", s)
		}
		if b.text("#facet-region-title") != "Summary of region" || b.text("#facet-category-title") != "Summary of category" {
			t.Errorf("a summary went after the facet")
		}
	})

	t.Run("every column's filter in reach at 1,400 and 400 px", func(t *testing.T) {
		for _, width := range []int64{1400, 400} {
			b.do(chromedp.EmulateViewport(width, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#grid")))
			if !eval[bool](b, `(() => { const g = document.querySelector("#grid").parentElement; return g.scrollWidth > g.clientWidth; })()`) {
				t.Errorf("at %d px the grid fits its frame; the test needs one that scrolls sideways", width)
			}
			for _, key := range header {
				for _, id := range []string{"o-" + key, "f-" + key, "show-" + key, "panel-sort-" + key, "panel-summary-" + key} {
					inReach := eval[bool](b, `(() => { const e = document.getElementById("`+id+`"); if (!e) return false;
						const r = e.getBoundingClientRect();
						return !e.closest(".grid-wrap") && r.width > 0 && r.left >= 0 && r.right <= document.documentElement.clientWidth; })()`)
					if !inReach {
						t.Errorf("at %d px #%s is out of reach without scrolling the grid sideways", width, id)
					}
				}
			}
			if wide := eval[float64](b, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); wide > 0 {
				t.Errorf("at %d px the page scrolls sideways by %.0f px", width, wide)
			}
		}
		b.do(chromedp.EmulateViewport(1400, 1000))
	})

	t.Run("columns chosen kept in the address, a saved view and an export", func(t *testing.T) {
		b.do(
			chromedp.Navigate(page+"?o.region=eq&f.region=South"),
			chromedp.WaitVisible(chromedp.CSS("#show-note")),
			chromedp.Click(chromedp.CSS("#show-note")),
			chromedp.Click(chromedp.CSS("#show-customer_zip")),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitNotPresent(chromedp.CSS("#sort-note")),
			chromedp.Click(chromedp.CSS("#earlier-amount")),
			chromedp.WaitVisible(chromedp.CSS("#later-quantity")),
		)
		want := []string{"order_id", "region", "category", "amount", "quantity", "order_date", "channel", "warehouse_location_code"}
		if got := b.shownKeys(); !slices.Equal(got, want) {
			t.Fatalf("the grid shows %v, want %v", got, want)
		}
		here := eval[string](b, `location.search`)
		if !strings.Contains(here, "col=amount&col=quantity") || strings.Contains(here, "col=note") {
			t.Errorf("the address %s does not hold the columns chosen", here)
		}
		b.do(
			chromedp.SendKeys(chromedp.CSS("#view-name"), "South, fewer columns"),
			chromedp.Click(chromedp.CSS("#save-view-button")),
			chromedp.WaitVisible(chromedp.CSS(".message")),
		)
		if got := b.text(".message"); !strings.Contains(got, "Saved as “South, fewer columns”") {
			t.Errorf("after saving: %q", got)
		}
		if after := eval[string](b, `location.search`); after != here {
			t.Errorf("after saving the address is %s, was %s (no message in it)", after, here)
		}
		body := b.download("#export-csv")
		recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\uFEFF")))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recs[0], want) || len(recs[1]) != len(want) {
			t.Errorf("the export's columns %v, want %v", recs[0], want)
		}
		b.do(chromedp.Navigate(ts.URL+"/files"), chromedp.Click(chromedp.CSS("#saved a.saved-link")), chromedp.WaitVisible(chromedp.CSS("#grid")))
		if got := b.shownKeys(); !slices.Equal(got, want) {
			t.Errorf("the saved view shows %v, want %v", got, want)
		}
	})

	t.Run("a three-condition filter's address is short", func(t *testing.T) {
		b.do(
			chromedp.Navigate(page),
			chromedp.WaitVisible(chromedp.CSS("#o-region")),
			chromedp.SetValue(chromedp.CSS("#o-region"), "eq"),
			chromedp.SendKeys(chromedp.CSS("#f-region"), "North"),
			chromedp.SetValue(chromedp.CSS("#o-amount"), "between"),
			chromedp.SendKeys(chromedp.CSS("#f-amount"), "100"),
			chromedp.SendKeys(chromedp.CSS("#t-amount"), "900"),
			chromedp.SetValue(chromedp.CSS("#o-order_date"), "gte"),
			chromedp.SetValue(chromedp.CSS("#f-order_date"), "2021-01-01"),
			chromedp.Click(chromedp.CSS("#apply")),
			chromedp.WaitVisible(chromedp.CSS("#f-order_date-0")),
		)
		href := eval[string](b, `location.href`)
		if len(href) >= 200 || regexp.MustCompile(`=(&|$)`).MatchString(href) {
			t.Errorf("the address of three conditions (%d characters): %s", len(href), href)
		}
		if got := b.text("#sentence"); !strings.Contains(got, `where region equals "North" and amount is between 100 and 900 and order_date is on or after 2021-01-01`) {
			t.Errorf("the sentence: %q", got)
		}
	})

	t.Run("a deep sorted page holds the rows query_table gives", func(t *testing.T) {
		for _, tc := range []struct {
			q    string
			args map[string]any
		}{
			{"?sort=amount&offset=12000", map[string]any{"sort_by": "amount", "offset": 12000}},
			{"?sort=note&dir=desc&offset=11950", map[string]any{"sort_by": "note", "direction": "desc", "offset": 11950}},
			{"?o.quantity=gte&f.quantity=2&sort=amount&offset=11000", map[string]any{"sort_by": "amount", "offset": 11000,
				"filters": []any{map[string]any{"column": "quantity", "op": "gte", "value": 2}}}},
		} {
			b.do(chromedp.Navigate(page+tc.q), chromedp.WaitVisible(chromedp.CSS("#range")))
			tc.args["file_id"], tc.args["limit"], tc.args["columns"] = tid, 20, []any{"order_id"}
			code, m := ts.Call(ana, "files.query_table", tc.args)
			if code != 200 {
				t.Fatalf("query_table: %d %v", code, m)
			}
			var want []string
			for _, r := range m["result"].(map[string]any)["rows"].([]any) {
				want = append(want, r.([]any)[0].(string))
			}
			if got := b.firstColumn(); len(got) < 20 || !slices.Equal(got[:20], want) {
				t.Errorf("%s: the page's first rows %v, query_table's %v", tc.q, got[:min(20, len(got))], want)
			}
		}
	})

	t.Run("a grouping by month reads well", func(t *testing.T) {
		b.do(chromedp.Navigate(page+"?g=order_date&gb=month&gm=sum&gc=amount"), chromedp.WaitVisible(chromedp.CSS("#group-table")))
		month := regexp.MustCompile(`^20\d\d-\d\d$`)
		labels := eval[[]string](b, `[...document.querySelectorAll("#group-table tbody td:first-child")].map(e => e.textContent)`)
		values := eval[[]string](b, `[...document.querySelectorAll("#group-table tbody td:last-child")].map(e => e.textContent)`)
		bars := eval[[]string](b, `[...document.querySelectorAll("#group-chart text.bar-label")].map(e => e.textContent)`)
		shown := eval[[]string](b, `[...document.querySelectorAll("#group-chart text:not(.bar-label)")].map(e => e.textContent)`)
		if len(labels) != 24 || len(bars) != 24 {
			t.Fatalf("%d groups and %d bars, want 24 months", len(labels), len(bars))
		}
		for i := range labels {
			if !month.MatchString(labels[i]) || labels[i] != bars[i] || !strings.Contains(values[i], ",") || !strings.Contains(shown[i], ",") {
				t.Errorf("group %d: %q %q, bar %q %q: want months and thousands separated", i, labels[i], values[i], bars[i], shown[i])
			}
		}
		if got := b.text("#group-table thead th:last-child"); got != "sum of amount" {
			t.Errorf("the measure is headed %q", got)
		}
		x := b.download("#group-xlsx")
		xrows := readXLSXRows(t, x)
		if xrows[0][1] != "sum of amount" || !month.MatchString(xrows[1][0]) {
			t.Errorf("group.xlsx begins %q", xrows[:2])
		}
		f, err := excelize.OpenReader(bytes.NewReader(x))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if shown, _ := f.GetCellValue("Sheet1", "B2"); !strings.Contains(shown, ",") {
			t.Errorf("group.xlsx shows B2 as %q, want thousands separated", shown)
		}
		zr, _ := zip.NewReader(bytes.NewReader(x), int64(len(x)))
		for _, zf := range zr.File {
			if strings.HasPrefix(zf.Name, "xl/charts/chart") {
				rc, _ := zf.Open()
				chart, _ := io.ReadAll(rc)
				rc.Close()
				if !bytes.Contains(chart, []byte(`formatCode="#,##0.00"`)) {
					t.Errorf("the chart's value axis has no thousands separator")
				}
			}
		}
	})

	t.Run("an export is named by its whole view", func(t *testing.T) {
		client, _ := ts.PageSignIn(users, "ana")
		q := "?o.region=eq&f.region=North&o.category=in&f.category=toys,books&o.amount=between&f.amount=100&t.amount=900&o.order_date=gte&f.order_date=2021-01-01"
		resp, err := client.Get(page + "/export" + q + "&format=csv")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := `orders, region equals "North" and category is one of "toys", "books" and amount is between 100 and 900 and order_date is on or after 2021-01-01.csv`
		if got := resp.Header.Get("Content-Disposition"); !strings.Contains(got, url.PathEscape(want)[:40]) || strings.Contains(got, "%E2%80%A6") {
			t.Errorf("the export's name: %s, want %s whole", got, want)
		}
	})
}
