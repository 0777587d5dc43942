package web_test

import (
	"fmt"
	"strings"
	"testing"

	"datadesk/api/apitest"

	"github.com/chromedp/chromedp"
)

// TestBrowserFilesList: 59 tables were one long page with no search, sort
// or paging. The files page now searches names, sorts by name, date, size
// or rows, and pages 25 at a time.
func TestBrowserFilesList(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		name := fmt.Sprintf("report-%02d.csv", i)
		if i%3 == 0 {
			name = fmt.Sprintf("sales-%02d.csv", i)
		}
		var b strings.Builder
		b.WriteString("a,b\n")
		for r := range i + 1 {
			fmt.Fprintf(&b, "%d,x\n", r)
		}
		if code, m := ts.Upload(ana, name, []byte(b.String())); code != 201 {
			t.Fatalf("upload %s: %d %v", name, code, m)
		}
	}
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	b.do(chromedp.Navigate(ts.URL+"/files"), chromedp.WaitVisible(chromedp.CSS("#files-count")))
	if got := b.text("#files-count"); got != "Files 1–25 of 30." {
		t.Errorf("the first page: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll("table.files tbody tr").length`); n != 25 {
		t.Errorf("%d files on the first page, want 25", n)
	}
	b.do(chromedp.Click(chromedp.CSS("#files-next")), chromedp.WaitVisible(chromedp.CSS("#files-prev")))
	if got := b.text("#files-count"); got != "Files 26–30 of 30." {
		t.Errorf("the second page: %q", got)
	}
	b.do(
		chromedp.SendKeys(chromedp.CSS("#files-q"), "sales"),
		chromedp.SetValue(chromedp.CSS("#files-sort"), "rows"),
		chromedp.Click(chromedp.CSS("#files-show")),
		chromedp.WaitVisible(chromedp.CSS(`#files-q[value="sales"]`)),
	)
	if got := b.text("#files-total"); got != "10" {
		t.Errorf("files named sales: %s, want 10", got)
	}
	names := eval[[]string](b, `[...document.querySelectorAll("table.files td.filename")].map(e => e.textContent.trim())`)
	if len(names) != 10 || names[0] != "sales-27.csv" || names[9] != "sales-00.csv" {
		t.Errorf("sales files by rows, most first: %q", names)
	}
}
