package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

// TestBrowserApprovalDetail: three pending calls looked alike (tool,
// caller, size, rule). The queue now names the files each call makes or
// reads and says the rule that held it in words; an approver opens one
// and reads what it will do: the caller, the rule that held it, its arguments with a file named
// and rows counted with the first of them; and an Approve clicked on a
// page gone stale says the call was already rejected, and by whom.
func TestBrowserApprovalDetail(t *testing.T) {
	t.Parallel()
	// Analysts' ZIPs wait for a person too, to hold a call that reads a
	// file.
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 4 << 20}, Policy: "p, role:analyst, files.create, r.attrs.Format == 'zip', approve, allow\n" + rbac.DefaultPolicy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	vic := apitest.AddUser(t, users, "vic", "viewer")
	root := apitest.AddUser(t, users, "root", "admin")
	for _, u := range []string{"root"} {
		if err := users.SetPassword(u, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	code, held := ts.Call(vic, "files.create", map[string]any{"filename": "targets.xlsx", "columns": []any{"region", "target"},
		"rows": []any{[]any{"North", 100}, []any{"South", 200}, []any{"East", 300}}})
	if code != 202 {
		t.Fatalf("pending call: %d %v", code, held)
	}
	id := held["approval"].(map[string]any)["id"].(string)
	_, up := ts.Upload(ana, "orders.csv", []byte("region,amount\nNorth,1\n"))
	code, held = ts.Call(ana, "files.create", map[string]any{"filename": "both.zip", "file_ids": []any{up["file"].(map[string]any)["id"]}})
	if code != 202 {
		t.Fatalf("pending ZIP: %d %v", code, held)
	}
	zipID := held["approval"].(map[string]any)["id"].(string)

	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/approvals"))
	b.signIn("root")
	b.do(chromedp.Navigate(ts.URL+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#approval-"+id+" a.approval-link")))
	if got := b.attr("#approval-"+id+" .approve", "aria-label"); got != "Approve files.create by vic ("+id+")" {
		t.Errorf("the Approve button's name: %q", got)
	}
	// The queue names the file each call makes or reads, and says the
	// rule that held it in words.
	if got := b.text("#approval-" + id + " .target"); got != "makes targets.xlsx" {
		t.Errorf("the queue's files of the create: %q", got)
	}
	if got, want := b.text("#approval-"+id+" .why"), "The policy holds files.create calls by viewers for a person's approval, every one."; got != want {
		t.Errorf("the queue's why: %q, want %q", got, want)
	}
	if got := b.text("#approval-" + zipID + " .target"); got != "makes both.zip; reads orders.csv" {
		t.Errorf("the queue's files of the ZIP: %q", got)
	}
	if got := b.text("#approval-" + zipID + " .why"); got != "The policy holds files.create calls by analysts for a person's approval when its format is zip." {
		t.Errorf("the queue's why of the ZIP: %q", got)
	}
	b.do(chromedp.Click(chromedp.CSS("#approval-"+id+" a.approval-link")), chromedp.WaitVisible(chromedp.CSS("#approval-args")))
	args := b.text("#approval-args")
	for _, want := range []string{"filename", "targets.xlsx", "3 rows", "North", "100", "2 columns"} {
		if !strings.Contains(args, want) {
			t.Errorf("the arguments lack %q: %s", want, args)
		}
	}
	if got := b.text("#approval-caller"); got != "vic" {
		t.Errorf("caller %q", got)
	}
	if got := b.text("#approval-reason"); !strings.HasPrefix(got, "The policy holds files.create calls by viewers") {
		t.Errorf("the rule shown: %q", got)
	}
	if got := b.text("#approval-target"); got != "makes targets.xlsx" {
		t.Errorf("the files shown: %q", got)
	}
	// The list page, then a rejection elsewhere: its Approve is stale.
	b.do(chromedp.Navigate(ts.URL+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#approval-"+id+" .approve")))
	if code, m, _ := ts.Do("POST", "/v1/approvals/"+id+"/reject", root, nil, ""); code != 200 {
		t.Fatalf("reject: %d %v", code, m)
	}
	b.do(chromedp.Click(chromedp.CSS("#approval-"+id+" .approve")), chromedp.WaitNotPresent(chromedp.CSS("#approval-"+id)), chromedp.WaitVisible(chromedp.CSS("main")))
	if got := b.text("main"); !strings.Contains(got, "already rejected by root") {
		t.Errorf("a stale Approve says: %q", got)
	}
}
