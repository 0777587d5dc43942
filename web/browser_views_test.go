package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSavedViews: the page could not save a view, and the
// assistant's stored views said nothing of what made them. A view is now
// saved by name from the table page; the files page lists it with what
// it shows in words, and opening it shows the same rows and sentence. A
// table an analysis stored says what made it.
func TestBrowserSavedViews(t *testing.T) {
	t.Parallel()
	ts, ana, _, file := analystServer(t)
	tid := file["table_id"].(string)
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	b.do(
		chromedp.Navigate(ts.URL+"/tables/"+tid+"?o.region=eq&f.region=North&o.amount=between&f.amount=10&t.amount=60&sort=amount&dir=desc"),
		chromedp.WaitVisible(chromedp.CSS("#view-name")),
	)
	total, sentence := b.text("#total"), b.text("#sentence")
	b.do(
		chromedp.SendKeys(chromedp.CSS("#view-name"), "North, mid amounts"),
		chromedp.Click(chromedp.CSS("#save-view-button")),
		chromedp.WaitVisible(chromedp.CSS(".message")),
	)
	if got := b.text(".message"); !strings.Contains(got, "Saved as “North, mid amounts”") {
		t.Errorf("after saving: %q", got)
	}
	b.do(chromedp.Navigate(ts.URL+"/files"), chromedp.WaitVisible(chromedp.CSS("#saved")))
	if got := b.text("#saved .shows"); got != `Rows where region equals "North" and amount is between 10 and 60, sorted by amount, largest first` {
		t.Errorf("the saved view shows: %q", got)
	}
	b.do(chromedp.Click(chromedp.CSS("#saved a.saved-link")), chromedp.WaitVisible(chromedp.CSS("#sentence")))
	if got := b.text("#total"); got != total {
		t.Errorf("the saved view opens on %s rows, saved on %s", got, total)
	}
	if got := b.text("#sentence"); got != sentence {
		t.Errorf("the saved view's sentence %q, saved %q", got, sentence)
	}
	// A stored analysis says what made it.
	code, res := ts.Call(ana, "files.analyze_table", map[string]any{"file_id": tid, "group_by": []any{"region"}, "show": true,
		"measures": []any{map[string]any{"op": "sum", "column": "amount"}}})
	if code != 200 {
		t.Fatalf("analyze: %d %v", code, res)
	}
	vid := res["result"].(map[string]any)["view"].(map[string]any)["table_id"].(string)
	b.do(chromedp.Navigate(ts.URL+"/tables/"+vid), chromedp.WaitVisible(chromedp.CSS("#made-by")))
	if got := b.text("#made-by"); !strings.Contains(got, "Made from orders by") || !strings.Contains(got, "region") {
		t.Errorf("a stored analysis says: %q", got)
	}
}
